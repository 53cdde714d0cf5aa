//! Whether narratives' prepare-mint transactions landed. Each creates its narrative's market,
//! and binary_vault never closes a market, so the market account owned by the program at the
//! narrative's address says the mint landed, at any time after.

use narrative_sdk::{ids, pda};

use super::ledger::{Ledger, LedgerError};

/// For each of `market_ids` (at most the 100 one `getMultipleAccounts` reads), whether its
/// market is on the ledger.
pub async fn markets_created(
    ledger: &dyn Ledger,
    market_ids: &[[u8; 32]],
) -> Result<Vec<bool>, LedgerError> {
    let addresses: Vec<_> = market_ids.iter().map(pda::binary::market).collect();
    let (_, found) = ledger.accounts(&addresses).await?;
    if found.len() != addresses.len() {
        return Err(LedgerError::Malformed(format!(
            "{} accounts for {} addresses",
            found.len(),
            addresses.len()
        )));
    }
    // Anyone can send lamports to the address; only the program can own an account there.
    Ok(found
        .iter()
        .map(|account| {
            account
                .as_ref()
                .is_some_and(|a| a.owner == ids::BINARY_VAULT)
        })
        .collect())
}
