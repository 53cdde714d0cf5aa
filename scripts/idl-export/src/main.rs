//! `cargo run -p idl-export` writes idl/<program>.json for every program;
//! `cargo run -p idl-export -- --check` fails if a committed file is stale.

use std::process::ExitCode;

use idl_export::{build_idl_json, check, idl_path, PROGRAMS};

fn main() -> ExitCode {
    let check_only = std::env::args().any(|a| a == "--check");
    let mut failed = false;
    for program in PROGRAMS {
        let result = if check_only {
            check(program).map(|()| format!("{program}: up to date"))
        } else {
            build_idl_json(program).and_then(|json| {
                let path = idl_path(program);
                std::fs::write(&path, json)?;
                Ok(format!("{program}: wrote {}", path.display()))
            })
        };
        match result {
            Ok(message) => println!("{message}"),
            Err(e) => {
                eprintln!("{program}: {e:#}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
