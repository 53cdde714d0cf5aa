//! The venues and APY sources as configured (`SOLANA_CLUSTER`, `LEND_A_*`, `LEND_B_*`,
//! `STAKE_*`, `DEFI_CONFIGURED_APYS`); defaults per cluster from the venues' published ids.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Context;
use narrative_sdk::Pubkey;

use crate::chain::venues::board::{ApySources, KEYS};
use crate::chain::venues::{
    lend_a, lend_b, lend_c, p0, stake_a, stake_b, Cluster, SharedVenue, VenueToken, Venues,
};
use crate::config::Config;
use crate::providers::venue_rates::{JitoKobe, MarinadeApi, RateApi};
use crate::values::TokenSymbol;

/// Circle's USDC on devnet and on mainnet.
pub const DEVNET_USDC: &str = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";
pub const MAINNET_USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

fn key(name: &str, text: &str) -> anyhow::Result<Pubkey> {
    text.trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("{name}: `{text}` is not a public key"))
}

/// `SYMBOL=<address>` entries as (token, address).
fn markets(
    name: &str,
    entries: &[String],
    mint_of: impl Fn(TokenSymbol) -> Pubkey,
) -> anyhow::Result<Vec<(VenueToken, Pubkey)>> {
    let mut out: Vec<(VenueToken, Pubkey)> = Vec::new();
    for entry in entries.iter().filter(|e| !e.trim().is_empty()) {
        let (symbol, address) = entry
            .split_once('=')
            .with_context(|| format!("{name}: `{entry}` is not SYMBOL=<address>"))?;
        let symbol: TokenSymbol = symbol
            .trim()
            .parse()
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        anyhow::ensure!(
            !out.iter().any(|(t, _)| t.symbol == symbol),
            "{name} names {symbol} twice"
        );
        let token = VenueToken {
            symbol,
            mint: mint_of(symbol),
            decimals: symbol.decimals(),
        };
        out.push((token, key(name, address)?));
    }
    Ok(out)
}

pub fn from_config(config: &Config) -> anyhow::Result<(Venues, ApySources)> {
    let cluster: Cluster = config
        .solana_cluster
        .parse()
        .map_err(|e| anyhow::anyhow!("SOLANA_CLUSTER: {e}"))?;
    let usdc = match (&config.usdc_mint, cluster) {
        (Some(mint), _) => key("USDC_MINT", mint)?,
        (None, Cluster::Devnet) => Pubkey::from_str_const(DEVNET_USDC),
        (None, Cluster::Mainnet) => Pubkey::from_str_const(MAINNET_USDC),
    };
    let mint_of = |symbol: TokenSymbol| match symbol {
        TokenSymbol::Sol => crate::chain::venues::NATIVE_MINT,
        TokenSymbol::Usdc => usdc,
    };
    let lend_a_program = match &config.lend_a_program {
        Some(program) => key("LEND_A_PROGRAM", program)?,
        None => lend_a::DEVNET_PROGRAM,
    };
    let lend_b_market = config
        .lend_b_market
        .as_deref()
        .map(|m| key("LEND_B_MARKET", m))
        .transpose()?;
    let lend_b_reserves = markets("LEND_B_RESERVES", &config.lend_b_reserves, mint_of)?;
    anyhow::ensure!(
        lend_b_reserves.is_empty() || lend_b_market.is_some(),
        "LEND_B_RESERVES needs LEND_B_MARKET"
    );
    let venues: Vec<SharedVenue> = vec![
        Arc::new(lend_a::LendA::new(
            lend_a_program,
            markets("LEND_A_RESERVES", &config.lend_a_reserves, mint_of)?,
        )),
        Arc::new(lend_b::LendB {
            market: lend_b_market.unwrap_or_default(),
            reserves: lend_b_reserves,
        }),
        Arc::new(lend_c::LendC::mainnet(&[
            VenueToken {
                symbol: TokenSymbol::Sol,
                mint: mint_of(TokenSymbol::Sol),
                decimals: TokenSymbol::Sol.decimals(),
            },
            VenueToken {
                symbol: TokenSymbol::Usdc,
                mint: mint_of(TokenSymbol::Usdc),
                decimals: TokenSymbol::Usdc.decimals(),
            },
        ])),
        Arc::new(stake_a::StakeA {
            program: stake_a::MAINNET_PROGRAM,
            pool: match &config.stake_a_pool {
                Some(pool) => key("STAKE_A_POOL", pool)?,
                None => stake_a::JITO_POOL,
            },
        }),
        Arc::new(stake_b::StakeB),
    ];
    let configured = percent_entries("DEFI_CONFIGURED_APYS", &config.defi_configured_apys, &KEYS)?;
    let api = |url: &Option<String>, make: fn(&str) -> anyhow::Result<Arc<dyn RateApi>>| {
        url.as_deref().map(make).transpose()
    };
    let sources = ApySources {
        stake_a_api: api(&config.stake_a_rate_api, |u| {
            Ok(Arc::new(JitoKobe::new(u)?) as Arc<dyn RateApi>)
        })?,
        stake_b_api: api(&config.stake_b_rate_api, |u| {
            Ok(Arc::new(MarinadeApi::new(u)?) as Arc<dyn RateApi>)
        })?,
        configured,
    };
    Ok((Venues::new(cluster, usdc, venues), sources))
}

/// p0 as configured (`P0_*`), None unless `P0_ENABLED`. Defaults per cluster: marginfi v2's
/// program and main group, and on mainnet-beta the main group's SOL and USDC banks.
pub fn p0_from_config(config: &Config, venues: &Venues) -> anyhow::Result<Option<p0::P0>> {
    if !config.p0_enabled {
        return Ok(None);
    }
    let (program, group) = match venues.cluster {
        Cluster::Devnet => (p0::DEVNET_PROGRAM, p0::DEVNET_GROUP),
        Cluster::Mainnet => (p0::MAINNET_PROGRAM, p0::MAINNET_GROUP),
    };
    let program = match &config.p0_program {
        Some(p) => key("P0_PROGRAM", p)?,
        None => program,
    };
    let group = match &config.p0_group {
        Some(g) => key("P0_GROUP", g)?,
        None => group,
    };
    let mut banks = markets("P0_BANKS", &config.p0_banks, |s| venues.mint(s))?;
    if config.p0_banks.is_empty() && venues.cluster == Cluster::Mainnet {
        banks = [
            (TokenSymbol::Sol, p0::MAINNET_SOL_BANK),
            (TokenSymbol::Usdc, p0::MAINNET_USDC_BANK),
        ]
        .into_iter()
        .map(|(symbol, bank)| {
            let token = VenueToken {
                symbol,
                mint: venues.mint(symbol),
                decimals: symbol.decimals(),
            };
            (token, bank)
        })
        .collect();
    }
    Ok(Some(p0::P0 {
        program,
        group,
        banks,
    }))
}

/// `key=percent` settings (`setting` names them in errors) over `keys`, percent 0 to 1000.
pub fn percent_entries(
    setting: &str,
    entries: &[String],
    keys: &[&str],
) -> anyhow::Result<BTreeMap<String, f64>> {
    let mut out = BTreeMap::new();
    for entry in entries.iter().filter(|e| !e.trim().is_empty()) {
        let (name, pct) = entry
            .split_once('=')
            .with_context(|| format!("{setting}: `{entry}` is not key=percent"))?;
        let name = name.trim();
        anyhow::ensure!(
            keys.contains(&name),
            "{setting}: `{name}` is none of {}",
            keys.join(", ")
        );
        let pct: f64 = pct
            .trim()
            .parse()
            .ok()
            .filter(|p: &f64| p.is_finite() && (0.0..=1000.0).contains(p))
            .with_context(|| format!("{setting}: `{entry}` is no percentage"))?;
        out.insert(name.to_owned(), pct);
    }
    Ok(out)
}
