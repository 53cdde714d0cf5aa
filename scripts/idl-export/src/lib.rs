//! Builds the programs' Anchor IDL without the anchor CLI.
//!
//! anchor-lang-idl's builder compiles a program with its `idl-build` feature and assembles the
//! JSON from the pieces the generated tests print. It sets its own `RUSTFLAGS`, so it builds in
//! a separate target directory (`<target>/idl-build`): sharing the main one would force a full
//! rebuild of both on every switch.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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
    let idl = anchor_lang_idl::build::IdlBuilder::new()
        .program_path(workspace_root().join("programs").join(program))
        .skip_lint(false)
        .build()
        .with_context(|| format!("building the IDL of {program}"))?;
    Ok(serde_json::to_string_pretty(&idl)? + "\n")
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
