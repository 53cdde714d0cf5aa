//! shield_vault operations through the sdk builders.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::system_instruction;
use narrative_sdk::shield::Claim;
use narrative_sdk::{pda, shield};
use shield_vault::instructions::OpenCoverageArgs;
use shield_vault::state::{
    Coverage, CoverageStatus, PayoutRecipient, ShieldBacking, ShieldKind, ShieldSide, ShieldVerdict,
};
use solana_keypair::Keypair;
use solana_program_test::BanksClientError;
use solana_signer::Signer;

use crate::harness::Harness;

impl Harness {
    /// A fresh protocol id (one coverage period), deterministic per harness.
    pub fn next_protocol_id(&mut self) -> [u8; 32] {
        let mut id = self.next_market_id();
        id[31] = 0x5d;
        id
    }

    /// Opens a shield as the admin, the fee paid by `fee_payer`.
    pub async fn open_shield(
        &mut self,
        kind: ShieldKind,
        protocol_wallet: Pubkey,
        period_days: u16,
        fee_lamports: u64,
        fee_payer: &Keypair,
    ) -> Result<[u8; 32], BanksClientError> {
        let protocol_id = self.next_protocol_id();
        let admin = self.admin.insecure_clone();
        let ix = shield::open_coverage(
            admin.pubkey(),
            fee_payer.pubkey(),
            self.treasury,
            OpenCoverageArgs {
                protocol_id,
                kind,
                protocol_wallet,
                period_days,
                fee_lamports,
            },
        );
        self.process(&[ix], &[&admin, fee_payer]).await?;
        Ok(protocol_id)
    }

    pub async fn coverage(&mut self, protocol_id: &[u8; 32]) -> Coverage {
        self.account(pda::shield::coverage(protocol_id)).await
    }

    pub async fn shield_backing(
        &mut self,
        protocol_id: &[u8; 32],
        backer: &Pubkey,
        side: ShieldSide,
    ) -> ShieldBacking {
        self.account(pda::shield::backing(protocol_id, backer, side))
            .await
    }

    pub async fn back_shield(
        &mut self,
        backer: &Keypair,
        protocol_id: &[u8; 32],
        side: ShieldSide,
        amount: u64,
    ) -> Result<(), BanksClientError> {
        let ix = shield::back_shield(backer.pubkey(), protocol_id, side, amount);
        self.process(&[ix], &[backer]).await
    }

    /// Oracle `oracle`'s vote: a side, or `ShieldVerdict::Unresolvable`.
    pub async fn shield_vote(
        &mut self,
        oracle: usize,
        protocol_id: &[u8; 32],
        vote: impl Into<ShieldVerdict>,
    ) -> Result<(), BanksClientError> {
        let oracle = self.oracles[oracle].insecure_clone();
        let ix = shield::submit_oracle_resolution(oracle.pubkey(), protocol_id, vote.into());
        self.process(&[ix], &[&oracle]).await
    }

    pub async fn harvest(
        &mut self,
        protocol_id: &[u8; 32],
        side: ShieldSide,
    ) -> Result<(), BanksClientError> {
        let harvester = self.harvester.insecure_clone();
        let ix = shield::harvest_yield(harvester.pubkey(), protocol_id, side);
        self.process(&[ix], &[&harvester]).await
    }

    /// Finalises, then forwards every share left in the losing vault as the keeper would.
    pub async fn shield_finalize(
        &mut self,
        protocol_id: &[u8; 32],
    ) -> Result<(), BanksClientError> {
        let ix = shield::finalize_resolution(protocol_id);
        self.process(&[ix], &[]).await?;
        self.forward_payouts(protocol_id).await?;
        self.forward_seam_share(protocol_id).await
    }

    /// Forwards a resolved coverage's treasury share and a partnership's protocol share,
    /// each in a transaction of its own, where one waits.
    pub async fn forward_payouts(
        &mut self,
        protocol_id: &[u8; 32],
    ) -> Result<(), BanksClientError> {
        let coverage = self.coverage(protocol_id).await;
        let Some(winner) = coverage.outcome else {
            return Ok(());
        };
        let waiting = [
            (
                PayoutRecipient::Treasury,
                coverage.treasury_payout,
                coverage.treasury_forwarded,
                self.treasury,
            ),
            (
                PayoutRecipient::Protocol,
                coverage.protocol_payout,
                coverage.protocol_forwarded,
                coverage.protocol_wallet,
            ),
        ];
        for (recipient, amount, forwarded, wallet) in waiting {
            if coverage.status == CoverageStatus::Resolved && amount > 0 && !forwarded {
                let ix = shield::forward_payout(protocol_id, winner.opposite(), recipient, wallet);
                self.process(&[ix], &[]).await?;
            }
        }
        Ok(())
    }

    /// Forwards a resolved coverage's seam share if one waits.
    pub async fn forward_seam_share(
        &mut self,
        protocol_id: &[u8; 32],
    ) -> Result<(), BanksClientError> {
        let coverage = self.coverage(protocol_id).await;
        let (Some(winner), false) = (coverage.outcome, coverage.seam_forwarded) else {
            return Ok(());
        };
        if coverage.seam_payout == 0 {
            return Ok(());
        }
        let epoch = self
            .asset_pool(&crucible_pool::SOL_MINT)
            .await
            .current_epoch;
        let ix = shield::forward_seam_share(protocol_id, winner.opposite(), epoch);
        self.process(&[ix], &[]).await
    }

    pub async fn shield_claim(
        &mut self,
        kind: Claim,
        backer: &Keypair,
        protocol_id: &[u8; 32],
        side: ShieldSide,
    ) -> Result<(), BanksClientError> {
        let ix = shield::claim(kind, backer.pubkey(), protocol_id, side);
        self.process(&[ix], &[backer]).await
    }

    /// Lamports a shield side vault holds above its rent reserve.
    pub async fn shield_vault_balance(&mut self, protocol_id: &[u8; 32], side: ShieldSide) -> u64 {
        let reserve = self.rent_for(0).await;
        self.lamports(pda::shield::vault(protocol_id, side)).await - reserve
    }

    /// Sends `lamports` from the context payer to `to` (yield arriving, or a donation).
    pub async fn send_lamports(&mut self, to: Pubkey, lamports: u64) {
        let payer = self.payer();
        let ix = system_instruction::transfer(&payer, &to, lamports);
        self.process(&[ix], &[]).await.expect("transfer");
    }
}
