//! SPL Token helpers on the bundled token program: mints, token accounts, balances.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::program_pack::Pack;
use anchor_lang::solana_program::system_instruction;
use anchor_spl::token::spl_token;
use solana_keypair::Keypair;
use solana_signer::Signer;

use crate::harness::Harness;

impl Harness {
    /// A new mint whose authority is the context payer.
    pub async fn create_mint(&mut self, decimals: u8) -> Pubkey {
        let mint = Keypair::new();
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
                None,
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
        let account = Keypair::new();
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
