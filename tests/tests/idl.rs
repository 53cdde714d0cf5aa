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

/// Every PDA the committed IDL describes is one a client can derive with the program's own
/// bytes; the accounts whose seeds are expressions (a side's vault seed, the next epoch's
/// number) carry no PDA description, so TypeScript clients ask for them instead of deriving
/// a wrong address.
#[test]
fn committed_idl_describes_only_pdas_a_client_derives_correctly() {
    let mut described = Vec::new();
    let mut undescribed = Vec::new();
    for program in idl_export::PROGRAMS {
        let idl: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(idl_export::idl_path(program)).unwrap())
                .unwrap();
        for instruction in idl["instructions"].as_array().unwrap() {
            for account in instruction["accounts"].as_array().unwrap() {
                let name = format!(
                    "{program}.{}.{}",
                    instruction["name"].as_str().unwrap(),
                    account["name"].as_str().unwrap()
                );
                match account.get("pda") {
                    Some(pda) => described.push((name, pda["seeds"].clone())),
                    None => undescribed.push(name),
                }
            }
        }
    }
    for (name, seeds) in &described {
        for seed in seeds.as_array().unwrap() {
            if let Some(path) = seed["path"].as_str() {
                assert!(
                    path.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                        && !path.ends_with("side"),
                    "{name}: seed {seed}"
                );
            }
        }
    }
    for name in [
        "binary_vault.back_market.vault",
        "binary_vault.back_market_spl.vault",
        "shield_vault.back_shield.vault",
        "shield_vault.harvest_yield.vault",
        "shield_vault.claim_safe_winner.vault",
        "shield_vault.claim_exploit_winner.vault",
        "shield_vault.claim_loser_yield.vault",
        "shield_vault.claim_refund.vault",
        "crucible_pool.close_epoch.next_epoch",
    ] {
        assert!(undescribed.iter().any(|n| n == name), "{name} has a PDA");
    }
    assert!(described.len() > 80, "{} PDAs described", described.len());
}

/// Every account of the three programs starts with its layout version byte (a one-byte type of
/// its own, `<Account>Version`), so a client sees which layout it holds before anything else.
#[test]
fn every_program_account_starts_with_its_layout_version() {
    let mut accounts = 0;
    for program in idl_export::PROGRAMS {
        let idl: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(idl_export::idl_path(program)).unwrap())
                .unwrap();
        let types = idl["types"].as_array().unwrap();
        let type_named = |name: &str| {
            types
                .iter()
                .find(|t| t["name"] == name)
                .unwrap_or_else(|| panic!("{program}: no type {name}"))
        };
        for account in idl["accounts"].as_array().unwrap() {
            let name = account["name"].as_str().unwrap();
            let first = &type_named(name)["type"]["fields"][0];
            let version_type = format!("{name}Version");
            assert_eq!(first["name"], "version", "{program}.{name}");
            assert_eq!(
                first["type"]["defined"]["name"], version_type,
                "{program}.{name}"
            );
            assert_eq!(
                type_named(&version_type)["type"]["fields"],
                serde_json::json!(["u8"]),
                "{program}.{version_type}"
            );
            accounts += 1;
        }
    }
    assert_eq!(accounts, 14, "the three programs' account types");
}
