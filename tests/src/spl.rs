//! SPL Token helpers on the bundled token program: mints, token accounts, balances.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::program_pack::Pack;
use anchor_lang::solana_program::system_instruction;
use anchor_spl::token::spl_token;
use solana_keypair::Keypair;
use solana_signer::Signer;

use crate::harness::Harness;

impl Harness {
    /// A new mint whose authority is the context payer, with no freeze authority.
    pub async fn create_mint(&mut self, decimals: u8) -> Pubkey {
        self.create_mint_freezable(decimals, None).await
    }

    /// A new mint whose authority is the context payer and whose freeze authority is `freeze`.
    pub async fn create_mint_freezable(&mut self, decimals: u8, freeze: Option<&Pubkey>) -> Pubkey {
        let mint = self.next_keypair();
        let payer = self.payer();
        let rent = self.rent_for(spl_token::state::Mint::LEN).await;
        let ixs = [
            system_instruction::create_account(
                &payer,
                &mint.pubkey(),
                rent,
                spl_token::state::Mint::LEN as u64,
                &spl_token::ID,
            ),
            spl_token::instruction::initialize_mint2(
                &spl_token::ID,
                &mint.pubkey(),
                &payer,
                freeze,
                decimals,
            )
            .expect("mint ix"),
        ];
        self.process(&ixs, &[&mint]).await.expect("mint created");
        mint.pubkey()
    }

    /// A new token account of `mint` owned by `owner`, holding `amount` freshly minted tokens.
    pub async fn create_token_account(
        &mut self,
        mint: &Pubkey,
        owner: &Pubkey,
        amount: u64,
    ) -> Pubkey {
        let account = self.next_keypair();
        let payer = self.payer();
        let rent = self.rent_for(spl_token::state::Account::LEN).await;
        let mut ixs = vec![
            system_instruction::create_account(
                &payer,
                &account.pubkey(),
                rent,
                spl_token::state::Account::LEN as u64,
                &spl_token::ID,
            ),
            spl_token::instruction::initialize_account3(
                &spl_token::ID,
                &account.pubkey(),
                mint,
                owner,
            )
            .expect("account ix"),
        ];
        if amount > 0 {
            ixs.push(
                spl_token::instruction::mint_to(
                    &spl_token::ID,
                    mint,
                    &account.pubkey(),
                    &payer,
                    &[],
                    amount,
                )
                .expect("mint_to ix"),
            );
        }
        self.process(&ixs, &[&account])
            .await
            .expect("token account created");
        account.pubkey()
    }

    pub async fn token_balance(&mut self, account: &Pubkey) -> u64 {
        let raw = self
            .raw_account(*account)
            .await
            .expect("token account exists");
        spl_token::state::Account::unpack(&raw.data)
            .expect("token account")
            .amount
    }
}

/// SPL market operations through the sdk builders.
impl Harness {
    /// A mint with a crucible_pool asset pool (so SPL markets may use it) and a funded token
    /// account for each wallet; returns the mint and the accounts in wallet order.
    pub async fn spl_setup(&mut self, units_per_wallet: u64) -> (Pubkey, Vec<Pubkey>) {
        let mint = self.create_mint(6).await;
        let admin = self.admin.insecure_clone();
        self.process(
            &[narrative_sdk::crucible::init_token_pool(
                admin.pubkey(),
                mint,
            )],
            &[&admin],
        )
        .await
        .expect("crucible token pool");
        let owners: Vec<Pubkey> = self.wallets.iter().map(|w| w.pubkey()).collect();
        let mut accounts = Vec::new();
        for owner in owners {
            accounts.push(
                self.create_token_account(&mint, &owner, units_per_wallet)
                    .await,
            );
        }
        (mint, accounts)
    }

    pub async fn create_spl_market(
        &mut self,
        creator: &Keypair,
        mint: Pubkey,
        variant: binary_vault::state::MarketVariant,
        deadline_in: i64,
    ) -> Result<[u8; 32], solana_program_test::BanksClientError> {
        let market_id = self.next_market_id();
        let deadline = self.now().await + deadline_in;
        let admin = self.admin.insecure_clone();
        let co_sign = variant == binary_vault::state::MarketVariant::Classic;
        let ix = narrative_sdk::binary::create_market_spl(
            creator.pubkey(),
            co_sign.then(|| admin.pubkey()),
            mint,
            binary_vault::instructions::CreateMarketArgs {
                market_id,
                variant,
                source: binary_vault::state::MarketSource::Seed,
                deadline,
            },
        );
        let signers: Vec<&Keypair> = if co_sign {
            vec![creator, &admin]
        } else {
            vec![creator]
        };
        self.process(&[ix], &signers).await?;
        Ok(market_id)
    }

    pub async fn finalize_spl(
        &mut self,
        market_id: &[u8; 32],
        mint: Pubkey,
    ) -> Result<(), solana_program_test::BanksClientError> {
        assert_eq!(self.market(market_id).await.mint, mint);
        self.finalize(market_id).await
    }
}
