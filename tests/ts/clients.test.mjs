// Builds every instruction of the three programs through the TypeScript Anchor clients from the
// committed IDL (idl/*.json) and compares it with the Rust sdk's (fixture.json, written by
// tests/tests/idl_clients.rs). Only the accounts the IDL cannot derive are passed; every other
// account is resolved by the client, reading the accounts a program-test run left (served by a
// stub connection). Reports every difference; exits non-zero if there is any.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { PublicKey, Keypair } from '@solana/web3.js';
import * as coral from '@coral-xyz/anchor';
import * as core from '@anchor-lang/core';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const fixture = JSON.parse(readFileSync(join(here, 'fixture.json'), 'utf8'));
const idls = Object.fromEntries(
  ['binary_vault', 'shield_vault', 'crucible_pool'].map((name) => [
    name,
    JSON.parse(readFileSync(join(root, 'idl', `${name}.json`), 'utf8')),
  ]),
);

// A connection that knows only the fixture's accounts: what a client reads to derive PDAs.
const stored = new Map(
  Object.entries(fixture.accounts).map(([address, a]) => [
    address,
    {
      owner: new PublicKey(a.owner),
      lamports: a.lamports,
      data: Buffer.from(a.data, 'base64'),
      executable: false,
      rentEpoch: 0,
    },
  ]),
);
const connection = {
  rpcEndpoint: 'fixture://',
  commitment: 'confirmed',
  async getAccountInfo(key) {
    return stored.get(key.toBase58()) ?? null;
  },
  async getAccountInfoAndContext(key) {
    return { context: { slot: 1 }, value: stored.get(key.toBase58()) ?? null };
  },
  async getMultipleAccountsInfo(keys) {
    return keys.map((key) => stored.get(key.toBase58()) ?? null);
  },
};
const wallet = {
  publicKey: Keypair.generate().publicKey,
  signTransaction: async (tx) => tx,
  signAllTransactions: async (txs) => txs,
};

const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

// Whether a client must pass this account itself: the IDL gives neither an address nor a PDA
// (a PDA whose seeds read the account's own data cannot be derived before it is known). Every
// other account is left to the client, so a wrong PDA in the IDL shows as a wrong account.
function mustBePassed(account) {
  if (account.address) return false;
  if (!account.pda) return true;
  return account.pda.seeds.some((seed) => seed.path && seed.path.split('.')[0] === account.name);
}

// Decoded arguments back into what `methods` takes: the coder's own output is already that
// shape (BN for 64-bit integers, PublicKey, { variant: {} } for enums).
function argumentsOf(program, idlInstruction, data) {
  const decoded = program.coder.instruction.decode(data);
  if (!decoded) throw new Error(`the client cannot decode ${idlInstruction.name}`);
  return idlInstruction.args.map((arg) => {
    const value = decoded.data[arg.name] ?? decoded.data[camel(arg.name)];
    if (value === undefined) throw new Error(`argument ${arg.name} missing after decoding`);
    return value;
  });
}

async function build(client, idl, entry) {
  const provider = new client.AnchorProvider(connection, wallet, {});
  const program = new client.Program(idl, provider);
  const idlInstruction = idl.instructions.find((i) => i.name === entry.name);
  const data = Buffer.from(entry.data, 'base64');
  const args = argumentsOf(program, idlInstruction, data);
  const passed = {};
  idlInstruction.accounts.forEach((account, i) => {
    if (!mustBePassed(account)) return;
    const key = entry.keys[i][0];
    const absent = account.optional && key === idl.address;
    passed[camel(account.name)] = absent ? null : new PublicKey(key);
  });
  const method = program.methods[camel(entry.name)](...args);
  const builder = typeof method.accountsPartial === 'function' ? method.accountsPartial(passed) : method.accounts(passed);
  return builder.instruction();
}

const clients = [
  ['@coral-xyz/anchor', coral],
  ['@anchor-lang/core', core],
];
let failures = 0;
let matched = 0;
for (const entry of fixture.instructions) {
  const idl = idls[entry.program];
  const expectedKeys = entry.keys.map(([key, signer, writable]) => `${key} ${signer ? 's' : '-'}${writable ? 'w' : '-'}`);
  const expectedData = Buffer.from(entry.data, 'base64').toString('hex');
  for (const [label, client] of clients) {
    const where = `${label} ${entry.program}.${entry.name}`;
    try {
      const ix = await build(client, idl, entry);
      const keys = ix.keys.map((k) => `${k.pubkey.toBase58()} ${k.isSigner ? 's' : '-'}${k.isWritable ? 'w' : '-'}`);
      const problems = [];
      if (ix.programId.toBase58() !== idl.address) problems.push(`program ${ix.programId.toBase58()}`);
      if (Buffer.from(ix.data).toString('hex') !== expectedData) problems.push('instruction data differs');
      if (keys.length !== expectedKeys.length) problems.push(`${keys.length} accounts, expected ${expectedKeys.length}`);
      keys.forEach((key, i) => {
        if (key !== expectedKeys[i]) {
          const name = idl.instructions.find((x) => x.name === entry.name).accounts[i]?.name;
          problems.push(`account ${i} (${name}): ${key}, expected ${expectedKeys[i]}`);
        }
      });
      if (problems.length) {
        failures += 1;
        console.error(`FAIL ${where}\n  ${problems.join('\n  ')}`);
      } else {
        matched += 1;
      }
    } catch (error) {
      failures += 1;
      console.error(`FAIL ${where}: ${error.message}`);
    }
  }
}
console.log(`${matched} of ${fixture.instructions.length * clients.length} instructions match the Rust sdk`);
process.exit(failures === 0 ? 0 : 1);
