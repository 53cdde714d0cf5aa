//! The IDL committed in idl/ must be what the programs build to now, so clients generated from
//! it never drift from the deployed programs. `cargo run -p idl-export` regenerates it.

#[test]
fn committed_idl_matches_the_programs() {
    let stale: Vec<String> = idl_export::PROGRAMS
        .iter()
        .filter_map(|program| idl_export::check(program).err().map(|e| format!("{e:#}")))
        .collect();
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

#[test]
fn committed_idl_names_every_program_account() {
    let idl: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(idl_export::idl_path("binary_vault")).unwrap(),
    )
    .unwrap();
    let accounts: Vec<&str> = idl["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        accounts,
        [
            "Backing",
            "Config",
            "Dispute",
            "Market",
            "OracleVote",
            "ProgramState"
        ]
    );
    assert_eq!(idl["address"], binary_vault::ID.to_string());
}
