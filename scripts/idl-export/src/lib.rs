//! Builds the programs' Anchor IDL without the anchor CLI.
//!
//! anchor-lang-idl's builder compiles a program with its `idl-build` feature and assembles the
//! JSON from the pieces the generated tests print. It sets its own `RUSTFLAGS`, so it builds in
//! a separate target directory (`<target>/idl-build`): sharing the main one would force a full
//! rebuild of both on every switch.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anchor_lang_idl::types::{IdlInstructionAccountItem, IdlSeed};
use anyhow::{Context, Result};

/// Programs whose IDL is exported, by their folder under `programs/`.
pub const PROGRAMS: [&str; 3] = ["binary_vault", "crucible_pool", "shield_vault"];

/// The checkout this process runs in: the nearest directory holding `Anchor.toml` above the
/// package cargo is running (or the current directory). Resolved at run time on purpose: the
/// build cache is shared between checkouts at different paths (CI clones), and cargo reuses an
/// artifact built in another checkout, so a compile-time `env!("CARGO_MANIFEST_DIR")` could
/// point at some other copy of the repository.
pub fn workspace_root() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::current_dir().expect("current directory"));
    start
        .ancestors()
        .find(|dir| dir.join("Anchor.toml").is_file())
        .unwrap_or_else(|| panic!("no Anchor.toml above {}", start.display()))
        .to_path_buf()
}

/// The committed IDL of `program`.
pub fn idl_path(program: &str) -> PathBuf {
    workspace_root().join("idl").join(format!("{program}.json"))
}

/// `<target>/idl-build`, from the target directory this process was started with.
fn idl_target_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target"))
            .join("idl-build")
    })
}

/// The IDL of `program` as it builds now, pretty-printed with a trailing newline.
pub fn build_idl_json(program: &str) -> Result<String> {
    // The builder inherits the environment. Its `RUSTUP_TOOLCHAIN` handling would try to
    // install a toolchain (a download this machine cannot make), and the target directory must
    // be its own (see the module comment).
    std::env::remove_var("RUSTUP_TOOLCHAIN");
    std::env::set_var("CARGO_TARGET_DIR", idl_target_dir());
    let mut idl = anchor_lang_idl::build::IdlBuilder::new()
        .program_path(workspace_root().join("programs").join(program))
        .skip_lint(false)
        .build()
        .with_context(|| format!("building the IDL of {program}"))?;
    for instruction in &mut idl.instructions {
        drop_inexpressible_pdas(&mut instruction.accounts);
    }
    Ok(serde_json::to_string_pretty(&idl)? + "\n")
}

/// Whether a client deriving this seed from the IDL gets the bytes the program uses. Anchor
/// writes the first token of a seed expression: `side.vault_seed()` becomes the raw `side`
/// argument (or `backing.side`), and `current_epoch.safe_add(1)?` a path no client can read.
/// The program uses other bytes, so a client following such a seed derives a wrong address.
fn seed_is_expressible(seed: &IdlSeed) -> bool {
    let path = match seed {
        IdlSeed::Const(_) => return true,
        IdlSeed::Arg(arg) => &arg.path,
        IdlSeed::Account(account) => &account.path,
    };
    let is_identifier_path = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    is_identifier_path && path.rsplit('.').next() != Some("side")
}

/// Removes the PDA description of every account whose seeds the IDL cannot state: such an
/// account is then one the client passes (the sdk derives it), never one it derives wrongly.
fn drop_inexpressible_pdas(accounts: &mut [IdlInstructionAccountItem]) {
    for item in accounts {
        match item {
            IdlInstructionAccountItem::Single(account) => {
                let wrong = account
                    .pda
                    .as_ref()
                    .is_some_and(|pda| !pda.seeds.iter().all(seed_is_expressible));
                if wrong {
                    account.pda = None;
                }
            }
            IdlInstructionAccountItem::Composite(group) => {
                drop_inexpressible_pdas(&mut group.accounts)
            }
        }
    }
}

/// Whether the committed IDL of `program` equals the one it builds to now; `Err` names the
/// first differing line.
pub fn check(program: &str) -> Result<()> {
    let built = build_idl_json(program)?;
    let path = idl_path(program);
    let committed =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    if built == committed {
        return Ok(());
    }
    let line = built
        .lines()
        .zip(committed.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| built.lines().count().min(committed.lines().count()))
        + 1;
    anyhow::bail!(
        "{} is stale (first difference at line {line}); run `cargo run -p idl-export`",
        path.display()
    )
}
