//! README's table of account sizes, rent and transaction size is computed here from the
//! programs' own types, and must match what README.md says. `UPDATE_FIGURES=1 cargo test
//! -p integration-tests --test figures` rewrites the table after a layout change.

use anchor_lang::prelude::{Pubkey, Rent};
use anchor_lang::solana_program::program_pack::Pack;
use anchor_lang::Space;
use anchor_spl::token::spl_token;
use binary_vault::state::{Backing, Dispute, Market, OracleVote, Side};
use crucible_pool::state::{ClaimReceipt, Epoch};
use narrative_sdk::{binary, tx};
use shield_vault::state::{Coverage, ShieldBacking, ShieldProgramState, ShieldSide, ShieldVote};

const BEGIN: &str = "<!-- figures:begin -->";
const END: &str = "<!-- figures:end -->";

fn row(what: &str, bytes: usize, rent: &Rent) -> String {
    let lamports = rent.minimum_balance(bytes);
    format!(
        "| {what} | {bytes} | {lamports} | {:.6} |",
        lamports as f64 / 1e9
    )
}

fn table() -> String {
    // Mainnet rent parameters, as program-test and every public cluster use.
    let rent = Rent::default();
    let market = 8 + Market::INIT_SPACE;
    let backing = 8 + Backing::INIT_SPACE;
    let vote = 8 + OracleVote::INIT_SPACE;
    let token_account = spl_token::state::Account::LEN;
    let wallet = Pubkey::new_unique();
    // As the api prepares it: the move, then the memo of its prepared id (a UUID's 36 bytes).
    let prepared_id = narrative_sdk::memo::memo("0190c3e2-7d1a-7b4e-9f00-1234567890ab");
    let back = tx::unsigned_transaction(
        &[
            binary::back_market(wallet, &[1; 32], Side::Yes, 10_000_000),
            prepared_id.clone(),
        ],
        &wallet,
        Default::default(),
    );
    let back_shield = tx::unsigned_transaction(
        &[
            narrative_sdk::shield::back_shield(wallet, &[1; 32], ShieldSide::Safe, 100_000_000),
            prepared_id,
        ],
        &wallet,
        Default::default(),
    );
    let sol_market_cost = rent.minimum_balance(market) + 2 * rent.minimum_balance(0);
    let coverage_cost =
        rent.minimum_balance(8 + Coverage::INIT_SPACE) + 2 * rent.minimum_balance(0);
    let spl_market_cost = rent.minimum_balance(market) + 2 * rent.minimum_balance(token_account);
    [
        "| account | bytes | rent-exempt lamports | SOL |".to_string(),
        "|---|---:|---:|---:|".to_string(),
        row("market (`binary_state`)", market, &rent),
        row("SOL vault reserve (`yes_vault`/`no_vault`, each)", 0, &rent),
        row(
            "SPL token vault (`yes_tvault`/`no_tvault`, each)",
            token_account,
            &rent,
        ),
        row(
            "backing (`binary_back`), per wallet and side",
            backing,
            &rent,
        ),
        row("oracle vote (`binary_oracle`), per oracle", vote, &rent),
        row(
            "dispute (`binary_dispute`), per market",
            8 + Dispute::INIT_SPACE,
            &rent,
        ),
        row(
            "crucible epoch (`crucible_epoch`)",
            8 + Epoch::INIT_SPACE,
            &rent,
        ),
        row(
            "crucible claim receipt (`crucible_claim`)",
            8 + ClaimReceipt::INIT_SPACE,
            &rent,
        ),
        row(
            "shield program state (`shield_program_state`)",
            8 + ShieldProgramState::INIT_SPACE,
            &rent,
        ),
        row(
            "shield coverage (`shield_state`), per period",
            8 + Coverage::INIT_SPACE,
            &rent,
        ),
        row(
            "shield vault reserve (`shield_safe`/`shield_exploit`, each)",
            0,
            &rent,
        ),
        row(
            "shield backing (`shield_back`), per wallet and side",
            8 + ShieldBacking::INIT_SPACE,
            &rent,
        ),
        row(
            "shield oracle vote (`shield_oracle`), per oracle",
            8 + ShieldVote::INIT_SPACE,
            &rent,
        ),
        String::new(),
        format!(
            "Creating a market costs its creator {sol_market_cost} lamports in SOL \
             (market + two vault reserves) or {spl_market_cost} in SPL (market + two token \
             vaults). A serialised unsigned `back_market` transaction, as the api prepares it (with \
             the memo of its prepared id), is {} bytes (limit 1232). Opening a shield costs the \
             admin {coverage_cost} lamports (coverage + two vault reserves); an unsigned \
             `back_shield` transaction is {} bytes.",
            tx::wire_size(&back),
            tx::wire_size(&back_shield)
        ),
    ]
    .join("\n")
}

#[test]
fn readme_figures_match_the_programs() {
    let path = idl_export::workspace_root().join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let (head, rest) = readme
        .split_once(BEGIN)
        .expect("figures:begin marker in README");
    let (_, tail) = rest.split_once(END).expect("figures:end marker in README");
    let expected = format!("{head}{BEGIN}\n{}\n{END}{tail}", table());
    if std::env::var_os("UPDATE_FIGURES").is_some() {
        std::fs::write(&path, &expected).expect("README written");
    }
    assert!(
        readme == expected,
        "README figures are stale; run UPDATE_FIGURES=1 cargo test -p integration-tests --test figures\n{}",
        table()
    );
}
