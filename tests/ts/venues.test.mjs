// Checks that the instructions our Rust service builds for outside Solana venues (Kamino Lending,
// Marinade, Jupiter Lend Earn) equal, byte for byte and account meta for account meta, what
// `@coral-xyz/anchor` builds from each venue's *published* IDL (venues/idl/*.json, see
// venues/idl/SOURCES.md). The fixture (venues.fixture.json, or the file VENUES_FIXTURE names) is
// written by a Rust test; its format is in venues/README.md.
//
// Each IDL is read by the Anchor release made for its format: legacy IDLs (before Anchor 0.30:
// no top-level `address`, no instruction `discriminator`) by @coral-xyz/anchor 0.29.0 (installed
// as `anchor-legacy`), new ones by @coral-xyz/anchor 0.32.1. Accounts go through
// `accountsStrict`, so the client resolves nothing itself; every account of the IDL must be in the
// fixture (null only for an absent optional account). Prints one line per instruction and the
// differences; exits non-zero on any difference or error.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import * as anchorNewModule from '@coral-xyz/anchor';
import * as anchorLegacyModule from 'anchor-legacy';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const fixturePath = process.env.VENUES_FIXTURE
  ? resolve(process.env.VENUES_FIXTURE)
  : join(here, 'venues.fixture.json');

function fatal(message) {
  console.error(`FAIL venues: ${message}`);
  process.exit(1);
}

if (!existsSync(fixturePath)) {
  fatal(
    `${fixturePath} is missing. It is written by the Rust venue-instruction test (cargo test); ` +
      'run that first, or point VENUES_FIXTURE at a fixture.',
  );
}
let fixture;
try {
  fixture = JSON.parse(readFileSync(fixturePath, 'utf8'));
} catch (error) {
  fatal(`${fixturePath} is not valid JSON: ${error.message}`);
}
if (!fixture || !Array.isArray(fixture.instructions) || fixture.instructions.length === 0) {
  fatal(`${fixturePath} has no instructions (expected {"instructions": [...]} with at least one entry)`);
}

// The two Anchor releases, each with the `camelcase` it uses itself (method and enum variant names).
function client(label, module, requireFrom, camelOptions) {
  const pkg = module.default ?? module;
  const camelcase = createRequire(require.resolve(requireFrom))('camelcase');
  return {
    label,
    Program: module.Program ?? pkg.Program,
    AnchorProvider: module.AnchorProvider ?? pkg.AnchorProvider,
    BN: module.BN ?? pkg.BN,
    camel: (s) => camelcase(s, camelOptions),
  };
}
const anchorLegacy = client('@coral-xyz/anchor@0.29.0', anchorLegacyModule, 'anchor-legacy', undefined);
const anchorNew = client('@coral-xyz/anchor@0.32.1', anchorNewModule, '@coral-xyz/anchor', { locale: false });

// Nothing is ever sent: the connection points nowhere.
const connection = new Connection('http://127.0.0.1:1', 'confirmed');
const wallet = {
  publicKey: Keypair.generate().publicKey,
  signTransaction: async (tx) => tx,
  signAllTransactions: async (txs) => txs,
};

const isLegacyIdl = (idl) =>
  !('address' in idl) && !idl.instructions.some((ix) => Array.isArray(ix.discriminator));

const idlCache = new Map();
function loadIdl(name) {
  if (typeof name !== 'string' || !/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`bad idl name ${JSON.stringify(name)}`);
  if (!idlCache.has(name)) {
    const path = join(here, 'venues', 'idl', `${name}.json`);
    if (!existsSync(path)) throw new Error(`no IDL ${path}`);
    idlCache.set(name, JSON.parse(readFileSync(path, 'utf8')));
  }
  return idlCache.get(name);
}

// The program built from the IDL alone, with the fixture's program id. `raw` is the IDL as
// published, `conv` the one the client works with (0.30+ camelCases every name; 0.29 does not).
function programFor(idlName, programId) {
  const raw = loadIdl(idlName);
  if (isLegacyIdl(raw)) {
    const provider = new anchorLegacy.AnchorProvider(connection, wallet, {});
    const program = new anchorLegacy.Program(raw, programId, provider);
    return { raw, conv: program.idl, program, client: anchorLegacy, legacy: true };
  }
  const provider = new anchorNew.AnchorProvider(connection, wallet, {});
  const program = new anchorNew.Program({ ...raw, address: programId.toBase58() }, provider);
  return { raw, conv: program.idl, program, client: anchorNew, legacy: false };
}

const flag = (account, legacyKey, newKey) => Boolean(account[legacyKey] ?? account[newKey]);
const isGroup = (account) => Array.isArray(account.accounts);
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function pubkey(value, where) {
  if (typeof value !== 'string') throw new Error(`${where}: expected a base58 public key string, got ${JSON.stringify(value)}`);
  try {
    return new PublicKey(value);
  } catch {
    throw new Error(`${where}: ${JSON.stringify(value)} is not a valid public key`);
  }
}

// ---- arguments: fixture JSON -> the values `program.methods[...]` takes ---------------------

function typeDefPair(ctx, defined, where) {
  const name = typeof defined === 'string' ? defined : defined.name;
  if (typeof defined === 'object' && defined.generics?.length) throw new Error(`${where}: generic type ${name} is not supported`);
  const index = (ctx.raw.types ?? []).findIndex((t) => t.name === name);
  if (index < 0) throw new Error(`${where}: type ${name} is not defined in the IDL`);
  return [ctx.raw.types[index], ctx.conv.types[index]];
}

function integer(value, where) {
  const text = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : null) : value;
  if (typeof text !== 'string' || !/^-?\d+$/.test(text)) throw new Error(`${where}: expected an integer (decimal string or number), got ${JSON.stringify(value)}`);
  return text;
}

function toArg(ctx, value, rawType, convType, where) {
  if (typeof rawType === 'string') {
    switch (rawType) {
      case 'bool':
        if (typeof value !== 'boolean') throw new Error(`${where}: expected a bool, got ${JSON.stringify(value)}`);
        return value;
      case 'u8': case 'i8': case 'u16': case 'i16': case 'u32': case 'i32':
        return Number(integer(value, where));
      case 'u64': case 'i64': case 'u128': case 'i128': case 'u256': case 'i256':
        return new ctx.client.BN(integer(value, where), 10);
      case 'f32': case 'f64':
        if (typeof value !== 'number' && typeof value !== 'string') throw new Error(`${where}: expected a number`);
        return Number(value);
      case 'string':
        if (typeof value !== 'string') throw new Error(`${where}: expected a string`);
        return value;
      case 'publicKey': case 'pubkey':
        return pubkey(value, where);
      case 'bytes':
        if (typeof value === 'string' && /^([0-9a-fA-F]{2})*$/.test(value)) return Buffer.from(value, 'hex');
        if (Array.isArray(value)) return Buffer.from(value);
        throw new Error(`${where}: expected bytes as a hex string or an array of numbers`);
      default:
        throw new Error(`${where}: IDL type ${rawType} is not supported`);
    }
  }
  if ('option' in rawType || 'coption' in rawType) {
    const key = 'option' in rawType ? 'option' : 'coption';
    return value === null ? null : toArg(ctx, value, rawType[key], convType[key], where);
  }
  if ('vec' in rawType) {
    if (!Array.isArray(value)) throw new Error(`${where}: expected an array`);
    return value.map((v, i) => toArg(ctx, v, rawType.vec, convType.vec, `${where}[${i}]`));
  }
  if ('array' in rawType) {
    const [inner, length] = rawType.array;
    if (!Array.isArray(value)) throw new Error(`${where}: expected an array`);
    if (typeof length === 'number' && value.length !== length) throw new Error(`${where}: expected ${length} elements, got ${value.length}`);
    return value.map((v, i) => toArg(ctx, v, inner, convType.array[0], `${where}[${i}]`));
  }
  if ('defined' in rawType) {
    const [rawDef, convDef] = typeDefPair(ctx, rawType.defined, where);
    if (rawDef.type.kind === 'type') return toArg(ctx, value, rawDef.type.alias, convDef.type.alias, where);
    if (rawDef.type.kind === 'struct') return toFields(ctx, value, rawDef.type.fields ?? [], convDef.type.fields ?? [], where);
    if (rawDef.type.kind === 'enum') {
      // A unit variant as its name, or {"Variant": fields}; names as the IDL spells them.
      const [variantName, fields] = typeof value === 'string' ? [value, undefined] : isPlainObject(value) && Object.keys(value).length === 1 ? Object.entries(value)[0] : [];
      const index = rawDef.type.variants.findIndex((v) => v.name === variantName);
      if (index < 0) throw new Error(`${where}: ${JSON.stringify(value)} is not a variant of ${rawDef.name}`);
      const rawVariant = rawDef.type.variants[index];
      const convVariant = convDef.type.variants[index];
      const key = ctx.client.camel(convVariant.name);
      if (!rawVariant.fields?.length) return { [key]: {} };
      return { [key]: toFields(ctx, fields, rawVariant.fields, convVariant.fields, `${where}.${variantName}`) };
    }
    throw new Error(`${where}: type kind ${rawDef.type.kind} is not supported`);
  }
  if ('generic' in rawType) throw new Error(`${where}: generic types are not supported`);
  throw new Error(`${where}: IDL type ${JSON.stringify(rawType)} is not supported`);
}

// Named fields: an object keyed by the IDL's names (out: the client's names). Tuple fields: an array.
function toFields(ctx, value, rawFields, convFields, where) {
  const named = rawFields.length > 0 && typeof rawFields[0] === 'object' && 'name' in rawFields[0];
  if (!named) {
    if (!Array.isArray(value) || value.length !== rawFields.length) throw new Error(`${where}: expected an array of ${rawFields.length} elements`);
    return rawFields.map((t, i) => toArg(ctx, value[i], t, convFields[i], `${where}[${i}]`));
  }
  if (!isPlainObject(value)) throw new Error(`${where}: expected an object with fields ${rawFields.map((f) => f.name).join(', ')}`);
  const extra = Object.keys(value).filter((k) => !rawFields.some((f) => f.name === k));
  if (extra.length) throw new Error(`${where}: unknown field(s) ${extra.join(', ')}`);
  const out = {};
  rawFields.forEach((field, i) => {
    if (!(field.name in value)) throw new Error(`${where}: field ${field.name} missing`);
    out[convFields[i].name] = toArg(ctx, value[field.name], field.type, convFields[i].type, `${where}.${field.name}`);
  });
  return out;
}

// ---- accounts: fixture names -> the client's names, every IDL account required ---------------

// Returns the accounts object for `accountsStrict`, the flat list of IDL accounts (with their
// paths, in instruction order) and problems with fixed addresses the IDL gives.
function toAccounts(ctx, given, rawAccounts, convAccounts, where, flat, problems) {
  if (!isPlainObject(given)) throw new Error(`${where}: expected an object of accounts`);
  const extra = Object.keys(given).filter((k) => !rawAccounts.some((a) => a.name === k));
  if (extra.length) {
    const squash = (s) => s.replace(/_/g, '').toLowerCase();
    const hint = (name) => {
      const spelled = rawAccounts.find((a) => squash(a.name) === squash(name));
      if (spelled) return `${name} (the IDL spells it ${spelled.name})`;
      const group = rawAccounts.find((a) => isGroup(a) && a.accounts.some((x) => x.name === name));
      return group ? `${name} (nested under ${group.name} in the IDL)` : name;
    };
    throw new Error(`${where}: account(s) not in the IDL: ${extra.map(hint).join(', ')}`);
  }
  const out = {};
  rawAccounts.forEach((account, i) => {
    const path = `${where}.${account.name}`;
    const conv = convAccounts[i];
    if (!(account.name in given)) {
      throw new Error(`${path}: missing from the fixture (every IDL account must be given${isGroup(account) ? ', as a nested object' : ''})`);
    }
    const value = given[account.name];
    if (isGroup(account)) {
      out[conv.name] = toAccounts(ctx, value, account.accounts, conv.accounts, path, flat, problems);
      return;
    }
    flat.push(path.replace(/^accounts\./, ''));
    if (value === null) {
      if (!flag(account, 'isOptional', 'optional')) throw new Error(`${path}: null but the account is not optional in the IDL`);
      out[conv.name] = null;
      return;
    }
    const key = pubkey(value, path);
    if (account.address && account.address !== key.toBase58()) {
      problems.push(`account ${path.replace(/^accounts\./, '')}: fixture gives ${key.toBase58()}, the IDL fixes ${account.address}`);
    }
    out[conv.name] = key;
  });
  return out;
}

// ---- one instruction ----------------------------------------------------------------------

async function check(entry, n) {
  const venue = entry.venue ?? `#${n}`;
  const label = `${venue} ${entry.instruction}`;
  for (const field of ['idl', 'instruction', 'program_id', 'args', 'accounts', 'expected']) {
    if (!(field in entry)) throw new Error(`field ${field} missing`);
  }
  const programId = pubkey(entry.program_id, 'program_id');
  const ctx = programFor(entry.idl, programId);
  const index = ctx.raw.instructions.findIndex((ix) => ix.name === entry.instruction);
  if (index < 0) throw new Error(`no instruction ${entry.instruction} in venues/idl/${entry.idl}.json`);
  const rawIx = ctx.raw.instructions[index];
  const convIx = ctx.conv.instructions[index];

  const notes = [];
  if (ctx.raw.address && ctx.raw.address !== programId.toBase58()) {
    notes.push(`note: program_id ${programId.toBase58()} is not the IDL's address ${ctx.raw.address}`);
  }

  if (!isPlainObject(entry.args)) throw new Error(`args must be an object`);
  const extraArgs = Object.keys(entry.args).filter((k) => !rawIx.args.some((a) => a.name === k));
  if (extraArgs.length) throw new Error(`arg(s) not in the IDL: ${extraArgs.join(', ')}`);
  const args = rawIx.args.map((arg, i) => {
    if (!(arg.name in entry.args)) throw new Error(`arg ${arg.name} missing`);
    return toArg(ctx, entry.args[arg.name], arg.type, convIx.args[i].type, `args.${arg.name}`);
  });

  const problems = [];
  const flat = [];
  const accounts = toAccounts(ctx, entry.accounts, rawIx.accounts, convIx.accounts, 'accounts', flat, problems);

  const methodName = [convIx.name, ctx.client.camel(convIx.name)].find((m) => typeof ctx.program.methods[m] === 'function');
  if (!methodName) throw new Error(`${ctx.client.label} exposes no method for ${entry.instruction}`);
  const builder = ctx.program.methods[methodName](...args);
  if (typeof builder.accountsStrict !== 'function') throw new Error(`${ctx.client.label} has no accountsStrict`);
  // Remaining accounts (a risk engine's `bank, oracle` pairs) go after the IDL's, as given:
  // Anchor appends them unchanged, so what this checks is that everything before them is the
  // IDL's and that they come last.
  const remaining = (entry.remaining_accounts ?? []).map((meta, i) => {
    if (!isPlainObject(meta)) throw new Error(`remaining_accounts[${i}]: expected {pubkey, is_signer, is_writable}`);
    return { pubkey: pubkey(meta.pubkey, `remaining_accounts[${i}]`), isSigner: Boolean(meta.is_signer), isWritable: Boolean(meta.is_writable) };
  });
  const ix = await builder.accountsStrict(accounts).remainingAccounts(remaining).instruction();

  // Program id.
  if (!ix.programId.equals(programId)) problems.push(`program id: built ${ix.programId.toBase58()}, expected ${programId.toBase58()}`);

  // Data.
  const expected = entry.expected ?? {};
  const builtHex = Buffer.from(ix.data).toString('hex');
  const expectedHex = String(expected.data_hex ?? '').toLowerCase();
  if (builtHex !== expectedHex) {
    let at = 0;
    while (at < builtHex.length && builtHex[at] === expectedHex[at]) at += 1;
    const byte = Math.floor(at / 2);
    problems.push(
      `data differs at byte ${byte}${byte < 8 ? ' (discriminator)' : ''} ` +
        `(built ${builtHex.length / 2} bytes, expected ${expectedHex.length / 2})\n` +
        `    built    ${builtHex}\n    expected ${expectedHex}`,
    );
  }

  // Account metas, in order.
  const expectedKeys = Array.isArray(expected.keys) ? expected.keys : [];
  if (ix.keys.length !== expectedKeys.length) problems.push(`${ix.keys.length} accounts built, ${expectedKeys.length} expected`);
  for (let i = 0; i < Math.max(ix.keys.length, expectedKeys.length); i += 1) {
    const got = ix.keys[i];
    const want = expectedKeys[i];
    const name = flat[i] ?? '(beyond the IDL)';
    if (!got || !want) {
      problems.push(`account ${i} (${name}): ${got ? 'built ' + got.pubkey.toBase58() + ', not expected' : 'expected ' + want.pubkey + ', not built'}`);
      continue;
    }
    const fields = [
      ['pubkey', got.pubkey.toBase58(), want.pubkey],
      ['is_signer', got.isSigner, want.is_signer],
      ['is_writable', got.isWritable, want.is_writable],
    ];
    for (const [field, built, wanted] of fields) {
      if (built !== wanted) problems.push(`account ${i} (${name}) ${field}: built ${built}, expected ${wanted}`);
    }
  }
  return { label, problems, notes, client: ctx.client.label };
}

let failures = 0;
let matched = 0;
for (const [n, entry] of fixture.instructions.entries()) {
  const fallback = `${entry?.venue ?? '#' + n} ${entry?.instruction ?? '?'}`;
  try {
    const { label, problems, notes, client: used } = await check(entry, n);
    for (const note of notes) console.log(`  ${label}: ${note}`);
    if (problems.length) {
      failures += 1;
      console.error(`FAIL ${label} (${used})\n  ${problems.join('\n  ')}`);
    } else {
      matched += 1;
      console.log(`ok ${label}`);
    }
  } catch (error) {
    failures += 1;
    console.error(`FAIL ${fallback}: ${error.message}`);
  }
}
console.log(`${matched} of ${fixture.instructions.length} venue instructions match what Anchor builds from the published IDL (${fixturePath})`);
process.exit(failures === 0 ? 0 : 1);
