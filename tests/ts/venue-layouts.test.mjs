// Checks that the byte offsets at which our Rust service reads the outside venues' accounts
// (Kamino's Reserve and Obligation, Marinade's State, Jupiter Lend's Lending, marginfi's Bank
// and MarginfiAccount) are where `@coral-xyz/anchor` lays those fields out from each venue's
// published IDL (venues/idl/*.json). The service's test doubles decode with the same constants,
// so only a check against the published layout can catch an offset that is wrong.
//
// The fixture's `accounts` (venues.fixture.json, or the file VENUES_FIXTURE names; written by
// the Rust test that writes its instructions) lists, per account, the field paths as the IDL
// spells them with the offset (from the account's first byte, discriminator included) and the
// size the Rust side reads, or for an array its count and stride. The offsets come from the
// account coder's own layouts (anchor 0.29.0 for legacy IDLs, 0.32.1 for new ones); an enum of
// unit variants is one byte, as both Borsh and bytemuck store it. Prints one line per account
// and the differences; exits non-zero on any difference or error.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import * as anchorNew from '@coral-xyz/anchor';
import * as anchorLegacy from 'anchor-legacy';

const here = dirname(fileURLToPath(import.meta.url));
const fixturePath = process.env.VENUES_FIXTURE
  ? resolve(process.env.VENUES_FIXTURE)
  : join(here, 'venues.fixture.json');
const DISCRIMINATOR = 8;

function fatal(message) {
  console.error(`FAIL venue layouts: ${message}`);
  process.exit(1);
}

if (!existsSync(fixturePath)) fatal(`${fixturePath} is missing; the Rust venue-instruction test writes it`);
const fixture = JSON.parse(readFileSync(fixturePath, 'utf8'));
if (!Array.isArray(fixture.accounts) || fixture.accounts.length === 0) {
  fatal(`${fixturePath} has no accounts (expected {"accounts": [...]} with at least one entry)`);
}

const isLegacyIdl = (idl) =>
  !('address' in idl) && !idl.instructions.some((ix) => Array.isArray(ix.discriminator));

function accountLayout(idlName, account) {
  if (!/^[A-Za-z0-9_-]+$/.test(idlName)) throw new Error(`bad idl name ${JSON.stringify(idlName)}`);
  const idl = JSON.parse(readFileSync(join(here, 'venues', 'idl', `${idlName}.json`), 'utf8'));
  const legacy = isLegacyIdl(idl);
  const module = legacy ? anchorLegacy : anchorNew;
  const Coder = module.BorshAccountsCoder ?? module.default.BorshAccountsCoder;
  const layouts = new Coder(idl).accountLayouts;
  const found = layouts.get(account);
  if (!found) throw new Error(`${idlName} has no account ${account} (it has ${[...layouts.keys()].join(', ')})`);
  return { layout: found.layout ?? found, client: legacy ? '@coral-xyz/anchor@0.29.0' : '@coral-xyz/anchor@0.32.1' };
}

// A fixed-size array comes wrapped (a struct holding one sequence named `values`).
function unwrap(layout) {
  for (;;) {
    if (layout.constructor.name === 'WrappedLayout') layout = layout.layout;
    else if (layout.fields?.length === 1 && layout.fields[0].property === 'values' && layout.fields[0].count !== undefined) {
      layout = layout.fields[0];
    } else return layout;
  }
}

// Bytes a layout takes; -1 when it varies. The coder leaves enums' spans open (-1) because
// variants may differ; one whose variants all take the same bytes takes that many.
function span(layout) {
  if (layout.span >= 0) return layout.span;
  if (layout.registry) {
    const spans = Object.values(layout.registry).map((v) => v.span);
    return spans.every((s) => s === spans[0] && s >= 0) ? spans[0] : -1;
  }
  const inner = unwrap(layout);
  if (inner !== layout) return span(inner);
  if (Array.isArray(layout.fields)) {
    let total = 0;
    for (const field of layout.fields) {
      const s = span(field);
      if (s < 0) return -1;
      total += s;
    }
    return total;
  }
  if (layout.count !== undefined) {
    const s = span(layout.elementLayout);
    return s < 0 ? -1 : s * layout.count;
  }
  return -1;
}

// The offset and layout of `path` ("a.b[3].c") in `root`, from the account's first byte.
function locate(root, path) {
  let layout = root;
  let offset = DISCRIMINATOR;
  for (const segment of path.split('.')) {
    const match = /^([A-Za-z0-9_]+)(?:\[(\d+)\])?$/.exec(segment);
    if (!match) throw new Error(`bad path segment ${JSON.stringify(segment)} in ${path}`);
    const [, name, index] = match;
    const struct = unwrap(layout);
    if (!Array.isArray(struct.fields)) throw new Error(`${path}: ${name} is not inside a struct`);
    let at = offset;
    let field;
    for (const f of struct.fields) {
      if (f.property === name) {
        field = f;
        break;
      }
      const s = span(f);
      if (s < 0) throw new Error(`${path}: ${f.property}, before ${name}, has no fixed size`);
      at += s;
    }
    if (!field) {
      throw new Error(`${path}: no field ${name} (there are ${struct.fields.map((f) => f.property).join(', ')})`);
    }
    layout = field;
    offset = at;
    if (index !== undefined) {
      const array = unwrap(field);
      if (array.count === undefined) throw new Error(`${path}: ${name} is not an array`);
      if (Number(index) >= array.count) throw new Error(`${path}: ${name} has ${array.count} elements`);
      offset += Number(index) * span(array.elementLayout);
      layout = array.elementLayout;
    }
  }
  return { offset, layout };
}

function check(entry) {
  const { layout: root, client } = accountLayout(entry.idl, entry.account);
  const label = `${entry.venue} ${entry.idl} ${entry.account}`;
  const problems = [];
  const total = DISCRIMINATOR + span(root);
  if (entry.len !== null && entry.len !== undefined && entry.len !== total) {
    problems.push(`length: the service expects ${entry.len}, the IDL lays out ${total}`);
  }
  if (!Array.isArray(entry.fields) || entry.fields.length === 0) problems.push('no fields listed');
  for (const field of entry.fields ?? []) {
    try {
      const { offset, layout } = locate(root, field.path);
      if (offset !== field.offset) problems.push(`${field.path}: read at ${field.offset}, laid out at ${offset}`);
      if (field.size !== undefined && span(layout) !== field.size) {
        problems.push(`${field.path}: read as ${field.size} bytes, laid out as ${span(layout)}`);
      }
      if (field.count !== undefined) {
        const array = unwrap(layout);
        if (array.count !== field.count) problems.push(`${field.path}: ${field.count} elements read, ${array.count} laid out`);
        const stride = array.elementLayout ? span(array.elementLayout) : undefined;
        if (stride !== field.stride) problems.push(`${field.path}: stride ${field.stride} read, ${stride} laid out`);
      }
    } catch (error) {
      problems.push(error.message);
    }
  }
  return { label, client, problems, fields: entry.fields?.length ?? 0 };
}

let failures = 0;
let fieldsChecked = 0;
for (const [n, entry] of fixture.accounts.entries()) {
  try {
    const { label, client, problems, fields } = check(entry);
    if (problems.length) {
      failures += 1;
      console.error(`FAIL ${label} (${client})\n  ${problems.join('\n  ')}`);
    } else {
      fieldsChecked += fields;
      console.log(`ok ${label}: ${fields} fields`);
    }
  } catch (error) {
    failures += 1;
    console.error(`FAIL account #${n} (${entry?.idl} ${entry?.account}): ${error.message}`);
  }
}
console.log(
  `${fixture.accounts.length - failures} of ${fixture.accounts.length} venue accounts (${fieldsChecked} fields) are read where Anchor lays them out from the published IDL (${fixturePath})`,
);
process.exit(failures === 0 ? 0 : 1);
