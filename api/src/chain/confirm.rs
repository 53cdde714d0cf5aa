//! Prepare → sign → confirm (spec 5.2), one runner for every money flow. A prepared transaction
//! is stored with the message the wallet must sign (fee payer = the wallet) and the flow's typed
//! parameters; confirm finds the signature on the ledger and accepts it only if it landed without
//! error, was paid by that wallet, and carries the prepared instructions in order. Nothing is
//! recorded until then, and a replayed signature answers the same and writes nothing.
//!
//! A flow ([`MoneyFlow`]) supplies only what differs: its kind and component, its parameters,
//! the accounts it changes, the rows it records and its answer. The runner owns the rest: the
//! halt rule (a halted component refuses prepares and fresh confirms; replays still answer), the
//! ledger wait, the checks, the conditional update that lets one of two racing confirms record
//! (the other answers from what the first recorded), the refresh of the changed accounts, and
//! waking the job worker.

use std::sync::Arc;
use std::time::Duration;

use narrative_sdk::{Instruction, Pubkey};
use narrative_store::entities::prepared_transactions;
use narrative_store::freshness::{Generations, Topic};
use narrative_store::Store;
use poem::http::StatusCode;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DatabaseTransaction, EntityTrait,
    QueryFilter, SqlErr,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use solana_hash::Hash;
use solana_keypair::Keypair;
use solana_transaction::versioned::VersionedTransaction;
use tokio::sync::Notify;

use crate::chain::blocks::{WalletBlocks, BLOCKS_TOPIC};
use crate::chain::halts::ensure_running;
use crate::chain::ledger::{LandedInstruction, LandedTransaction, Ledger};
use crate::chain::prepared_writer::{insert_unless_halted, NewPrepared, PreparedWriter, Stored};
use crate::clock::SharedClock;
use crate::error::ApiError;
use crate::freshness::Freshness;
use crate::jobs::refresh_accounts::RefreshAccounts;
use crate::values::{Base58Signature, Component, PreparedId, Wallet};

/// The compute-budget program: wallets add its instructions (priority fees) before signing,
/// which changes nothing the service cares about.
const COMPUTE_BUDGET_PROGRAM: Pubkey =
    Pubkey::from_str_const("ComputeBudget111111111111111111111111111111");

/// How long confirm waits for a signature the ledger does not show yet.
#[derive(Debug, Clone, Copy)]
pub struct ConfirmWait {
    pub attempts: u32,
    pub interval: Duration,
}

impl ConfirmWait {
    /// Polls every 250 ms for about `total_ms`.
    pub fn for_millis(total_ms: u64) -> ConfirmWait {
        let interval = Duration::from_millis(250);
        ConfirmWait {
            attempts: (total_ms / 250).max(1) as u32,
            interval,
        }
    }
}

/// A prepared transaction as a flow sees it.
#[derive(Debug, Clone)]
pub struct Prepared<P> {
    pub id: PreparedId,
    /// The wallet that signs and pays.
    pub wallet: Wallet,
    pub params: P,
    /// The signature that confirmed it, once confirmed.
    pub signature: Option<Base58Signature>,
    /// The unsigned message the wallet was given.
    message: Vec<u8>,
}

/// The answer of a confirmed move that records nothing of its own: which prepared
/// transaction, the signature that confirmed it and what was prepared.
#[derive(Debug, Clone)]
pub struct Confirmed<P> {
    pub prepared_id: PreparedId,
    pub signature: Base58Signature,
    pub params: P,
}

impl<P: Clone> Prepared<P> {
    /// This prepared transaction as confirmed; an internal error while it is not.
    pub fn confirmed(&self) -> Result<Confirmed<P>, ApiError> {
        Ok(Confirmed {
            prepared_id: self.id,
            signature: self
                .signature
                .ok_or_else(|| ApiError::internal("answering an unconfirmed move"))?,
            params: self.params.clone(),
        })
    }
}

/// A transaction ready for the wallet.
pub struct Unsigned {
    pub id: PreparedId,
    /// Base64 wire bytes, unsigned by the wallet (spec 4.0 `transaction`); a co-signed flow's
    /// service signatures are already in place.
    pub transaction: String,
    pub blockhash: String,
}

/// What differs between money flows.
#[async_trait::async_trait]
pub trait MoneyFlow: Send + Sync {
    /// The kind its prepared transactions are stored as.
    const KIND: &'static str;
    /// What prepare stores for confirm.
    type Params: Serialize + DeserializeOwned + Send + Sync;
    /// The answer of a confirm, fresh or replayed.
    type Confirmed: Send;

    /// The component whose halt flag stops this prepared transaction: a property of what was
    /// prepared, not of the route that confirms it.
    fn component(&self, params: &Self::Params) -> Component;

    /// Accounts the transaction changed, re-read into the store once it is confirmed.
    fn changed(&self, prepared: &Prepared<Self::Params>) -> Vec<Pubkey>;

    /// Whether the wallet gets a versioned (v0) transaction rather than a legacy one (a venue
    /// that takes versioned transactions, spec 4.5's lend_c). Co-signed flows stay legacy.
    fn versioned(&self, _params: &Self::Params) -> bool {
        false
    }

    /// The rows recorded with the confirmation, in its database transaction. None by default:
    /// a move whose result is on chain reaches the store through the refresh of `changed`.
    async fn record(
        &self,
        _txn: &DatabaseTransaction,
        _prepared: &Prepared<Self::Params>,
        _signature: &Base58Signature,
        _now: i64,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// The answer, from what was recorded; `fresh` when this request recorded it, false for a
    /// replay (or a request that lost the race to record it).
    async fn answer(
        &self,
        db: &DatabaseConnection,
        prepared: &Prepared<Self::Params>,
        fresh: bool,
    ) -> Result<Self::Confirmed, ApiError>;
}

/// What a flow checks before it prepares ([`Chain::prepare_checked`]).
#[async_trait::async_trait]
pub trait Admission: Send + Sync {
    /// The topics whose data the checks read.
    fn topics(&self) -> &'static [Topic];

    /// Refuses the prepare, reading the store as of `at` (values kept under those
    /// generations, loaded when none is).
    async fn check(&self, at: &Generations) -> Result<(), ApiError>;
}

/// Where a prepared transaction stands against a signature.
pub enum Opened<P> {
    /// Confirmed by this signature already.
    Replay(Prepared<P>),
    /// Not confirmed yet.
    Unconfirmed(Prepared<P>),
}

impl<P> Opened<P> {
    /// The prepared transaction, confirmed or not.
    pub fn prepared(&self) -> &Prepared<P> {
        match self {
            Opened::Replay(p) | Opened::Unconfirmed(p) => p,
        }
    }

    pub fn is_replay(&self) -> bool {
        matches!(self, Opened::Replay(_))
    }
}

/// The most bytes a transaction may take on the wire (Solana's packet).
pub const PACKET_BYTES: u64 = 1232;

/// The stored row of a transaction over `instructions` for `wallet` to sign and pay, and what
/// the wallet is given: a legacy transaction, or a v0 one when the flow asks for it (without
/// lookup tables, so every account is in the message and confirm compares it the same way).
///
/// The transaction ends with a memo of the row's id. Anyone may ask for a prepare naming any
/// wallet, and without the memo a stranger asking for the wallet's very move on the same
/// blockhash would be given the same message, so the wallet's one signature would confirm
/// either row; with it, a signature is the signed row's alone.
fn prepared_row<F: MoneyFlow>(
    flow: &F,
    blockhash: Hash,
    wallet: &Wallet,
    instructions: &[Instruction],
    params: &F::Params,
    cosigners: &[&Keypair],
    now: i64,
) -> Result<(NewPrepared, Unsigned), ApiError> {
    let id = PreparedId::new_ordered(now);
    let mut instructions = instructions.to_vec();
    instructions.push(narrative_sdk::memo::memo(&id.to_string()));
    let (message, transaction, size) = if flow.versioned(params) {
        if !cosigners.is_empty() {
            return Err(ApiError::internal(
                "a co-signed flow prepares legacy transactions",
            ));
        }
        let tx =
            narrative_sdk::tx::unsigned_v0_transaction(&instructions, &wallet.pubkey(), blockhash)
                .map_err(ApiError::internal)?;
        (
            bincode::serialize(&tx.message).map_err(ApiError::internal)?,
            narrative_sdk::tx::versioned_to_base64(&tx),
            bincode::serialized_size(&tx).map_err(ApiError::internal)?,
        )
    } else {
        let mut tx =
            narrative_sdk::tx::unsigned_transaction(&instructions, &wallet.pubkey(), blockhash);
        if !cosigners.is_empty() {
            // The service's signatures go in with the message; the wallet's slot stays empty.
            tx.try_partial_sign(cosigners, blockhash)
                .map_err(ApiError::internal)?;
        }
        (
            bincode::serialize(&tx.message).map_err(ApiError::internal)?,
            narrative_sdk::tx::to_base64(&tx),
            bincode::serialized_size(&tx).map_err(ApiError::internal)?,
        )
    };
    // A transaction over the packet could never land; the flow built too much for one.
    if size > PACKET_BYTES {
        return Err(ApiError::internal(format!(
            "a prepared {} transaction of {size} bytes, over the {PACKET_BYTES} a packet holds",
            F::KIND
        )));
    }
    let blockhash = blockhash.to_string();
    let row = NewPrepared {
        id: id.to_string(),
        kind: F::KIND,
        wallet: wallet.to_string(),
        message,
        blockhash: blockhash.clone(),
        params: serde_json::to_value(params).map_err(ApiError::internal)?,
        created_at: now,
    };
    let unsigned = Unsigned {
        id,
        transaction,
        blockhash,
    };
    Ok((row, unsigned))
}

/// Which of `rows` (prepared transactions) `landed` carries: the first that [`verify`]
/// accepts.
pub fn carried_in(
    rows: &[prepared_transactions::Model],
    landed: &LandedTransaction,
) -> Result<Option<usize>, ApiError> {
    for (i, row) in rows.iter().enumerate() {
        let prepared = from_row::<serde_json::Value>(row.clone())?;
        if verify(&prepared, landed).is_ok() {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// The ledger, the store and the clock, as the money flows use them.
pub struct Chain {
    pub store: Store,
    pub ledger: Arc<dyn Ledger>,
    pub clock: SharedClock,
    pub wait: ConfirmWait,
    /// Wakes the job worker when a confirm queued follow-up work.
    pub jobs_wake: Arc<Notify>,
    /// Stores the prepared transactions made outside a caller's database transaction, many
    /// to a statement under load.
    pub writer: PreparedWriter,
    /// Wallets screening blocked: every prepare refuses them.
    pub blocks: WalletBlocks,
    /// The store's generations, which every prepare's checks are read under.
    pub freshness: Arc<Freshness>,
}

impl Chain {
    /// Builds the wallet's transaction over `instructions` and stores it with `params`, through
    /// the group-commit writer. Refused for a blocked wallet, and while the flow is halted:
    /// flows also check the halt first, so that a halted component answers 503 before any other
    /// refusal, and the write's own check is the one a halt set in between cannot slip past.
    pub async fn prepare<F: MoneyFlow>(
        &self,
        flow: &F,
        wallet: &Wallet,
        instructions: &[Instruction],
        params: &F::Params,
    ) -> Result<Unsigned, ApiError> {
        self.prepare_admitted(None, flow, wallet, instructions, params, &[])
            .await
    }

    /// [`Chain::prepare`] for a transaction the service co-signs (as a mint authority, say):
    /// `cosigners` sign the prepared message before the wallet is given it.
    pub async fn prepare_cosigned<F: MoneyFlow>(
        &self,
        flow: &F,
        wallet: &Wallet,
        instructions: &[Instruction],
        params: &F::Params,
        cosigners: &[&Keypair],
    ) -> Result<Unsigned, ApiError> {
        self.prepare_admitted(None, flow, wallet, instructions, params, cosigners)
            .await
    }

    /// Builds the transaction and stores its row through the group-commit writer: the
    /// transaction for the wallet and the generations the write read; refused while the flow's
    /// component is halted.
    async fn write_prepared<F: MoneyFlow>(
        &self,
        flow: &F,
        wallet: &Wallet,
        instructions: &[Instruction],
        params: &F::Params,
        cosigners: &[&Keypair],
    ) -> Result<(Unsigned, Generations), ApiError> {
        let blockhash = self.blockhash().await?;
        let component = flow.component(params);
        let (row, unsigned) = prepared_row::<F>(
            flow,
            blockhash,
            wallet,
            instructions,
            params,
            cosigners,
            self.clock.now(),
        )?;
        match self.writer.write(row, component).await? {
            (Stored::Written, at_write) => Ok((unsigned, at_write)),
            (Stored::Halted, _) => Err(ApiError::system_halted(component.as_str())),
        }
    }

    /// [`Chain::prepare`] for a flow that reads the store before it prepares (a halt flag,
    /// the wallet's terms, the coverage), from values kept under generations
    /// ([`crate::freshness::Memo`]), without a probe of its own on its usual path:
    ///
    /// 1. the wallet's block and `admission` are checked under the newest generations known
    ///    (no round trip); a refusal is checked again after the freshness barrier, so every
    ///    refusal answers data as new as the request;
    /// 2. the row is written by the group-commit writer, whose statement also reads the
    ///    generations at its moment, which is after the request arrived;
    /// 3. if the topics the checks read moved between the checks and the write, they run
    ///    again as of the write, and a refusal then removes the row it wrote.
    ///
    /// So what a prepare accepted held when its row was written, and the halt flag is checked
    /// by the write itself.
    pub async fn prepare_checked<F: MoneyFlow>(
        &self,
        admission: &dyn Admission,
        flow: &F,
        wallet: &Wallet,
        instructions: &[Instruction],
        params: &F::Params,
    ) -> Result<Unsigned, ApiError> {
        self.prepare_admitted(Some(admission), flow, wallet, instructions, params, &[])
            .await
    }

    /// The checks of a prepare as of `at`: the wallet's block first (403 before any other
    /// refusal a blocked wallet could learn from), then the flow's own.
    async fn admit(
        &self,
        admission: Option<&dyn Admission>,
        wallet: &Wallet,
        at: &Generations,
    ) -> Result<(), ApiError> {
        self.blocks.check(wallet, at).await?;
        match admission {
            Some(admission) => admission.check(at).await,
            None => Ok(()),
        }
    }

    /// [`Chain::prepare_checked`], with or without checks of the flow's own.
    async fn prepare_admitted<F: MoneyFlow>(
        &self,
        admission: Option<&dyn Admission>,
        flow: &F,
        wallet: &Wallet,
        instructions: &[Instruction],
        params: &F::Params,
        cosigners: &[&Keypair],
    ) -> Result<Unsigned, ApiError> {
        let freshness = &self.freshness;
        let barrier = async || freshness.current().await.map_err(ApiError::internal);
        let guess = match freshness.latest() {
            Some(known) => known,
            None => barrier().await?,
        };
        let checked_under = match self.admit(admission, wallet, &guess).await {
            Ok(()) => guess,
            Err(_) => {
                let now = barrier().await?;
                self.admit(admission, wallet, &now).await?;
                now
            }
        };
        let (unsigned, at_write) = self
            .write_prepared(flow, wallet, instructions, params, cosigners)
            .await?;
        freshness.observe(&at_write);
        let flow_topics = admission.map_or(&[][..], |a| a.topics());
        let unmoved = checked_under.agree_on(&at_write, flow_topics)
            && checked_under.agree_on(&at_write, &[BLOCKS_TOPIC]);
        if !unmoved {
            if let Err(refusal) = self.admit(admission, wallet, &at_write).await {
                prepared_transactions::Entity::delete_by_id(unsigned.id.to_string())
                    .exec(self.store.db())
                    .await?;
                return Err(refusal);
            }
        }
        Ok(unsigned)
    }

    /// The blockhash a prepared transaction is built on. A flow that stores its prepared
    /// transaction inside its own database transaction asks for it before beginning one, so
    /// that no write lock is held across a ledger call.
    pub async fn blockhash(&self) -> Result<Hash, ApiError> {
        self.ledger.latest_blockhash().await.map_err(ApiError::from)
    }

    /// [`Chain::prepare`] on a `blockhash` already fetched, inside `db` (the caller's database
    /// transaction, when it has one).
    pub async fn prepare_with<F: MoneyFlow>(
        &self,
        db: &impl ConnectionTrait,
        blockhash: Hash,
        flow: &F,
        wallet: &Wallet,
        instructions: &[Instruction],
        params: &F::Params,
    ) -> Result<Unsigned, ApiError> {
        WalletBlocks::check_in(db, wallet).await?;
        let component = flow.component(params);
        let (row, unsigned) = prepared_row::<F>(
            flow,
            blockhash,
            wallet,
            instructions,
            params,
            &[],
            self.clock.now(),
        )?;
        let stored = db
            .execute_raw(insert_unless_halted(
                db.get_database_backend(),
                vec![row],
                component,
            ))
            .await?;
        if stored.rows_affected() == 0 {
            return Err(ApiError::system_halted(component.as_str()));
        }
        Ok(unsigned)
    }

    /// Confirms prepared transaction `id` of `flow` by `signature`: what every confirm route
    /// does.
    pub async fn confirm<F: MoneyFlow>(
        &self,
        flow: &F,
        id: PreparedId,
        signature: Base58Signature,
    ) -> Result<F::Confirmed, ApiError> {
        let db = self.store.db();
        let prepared = match self.open::<F>(id, &signature).await? {
            Opened::Replay(prepared) => return flow.answer(db, &prepared, false).await,
            Opened::Unconfirmed(prepared) => prepared,
        };
        // The ledger is asked only once the store has nothing to answer from.
        self.check_landed(flow, &prepared, &signature).await?;
        self.record(flow, prepared, signature).await
    }

    /// [`Chain::confirm`] for a flow that records what its landed transaction did, or when, of
    /// a prepared transaction its caller opened (and checked: the wallet's own, say): once the
    /// landing is verified, `recording` makes the flow that records it from the landed
    /// transaction and the prepared one (a replay is answered by `flow`, as recorded).
    pub async fn confirm_landed<F: MoneyFlow>(
        &self,
        flow: &F,
        opened: Opened<F::Params>,
        signature: Base58Signature,
        recording: impl AsyncFnOnce(LandedTransaction, &Prepared<F::Params>) -> Result<F, ApiError>,
    ) -> Result<F::Confirmed, ApiError> {
        let prepared = match opened {
            Opened::Replay(prepared) => {
                return flow.answer(self.store.db(), &prepared, false).await
            }
            Opened::Unconfirmed(prepared) => prepared,
        };
        let landed = self.check_landed(flow, &prepared, &signature).await?;
        let recorder = recording(landed, &prepared).await?;
        self.record(&recorder, prepared, signature).await
    }

    /// What a confirm checks before it records: `prepared`'s component runs, and `signature`
    /// landed it, from its wallet, with its instructions (waiting up to the confirm wait); the
    /// landed transaction. A flow that records what the landed transaction did, or when, is
    /// confirmed through [`Chain::confirm_landed`].
    pub async fn check_landed<F: MoneyFlow>(
        &self,
        flow: &F,
        prepared: &Prepared<F::Params>,
        signature: &Base58Signature,
    ) -> Result<LandedTransaction, ApiError> {
        ensure_running(self.store.db(), flow.component(&prepared.params)).await?;
        let landed = self.landed(signature).await?;
        match verify(prepared, &landed) {
            Ok(()) => Ok(landed),
            // The wallet signed another of its prepares (a copy someone else asked for, or a
            // client that kept the wrong id): the answer names the one it signed.
            Err(refused) if landed.error.is_none() => Err(
                match self.signed_as::<F>(&prepared.wallet, &landed).await? {
                    Some(signed) => signed_for_another(&signed.id),
                    None => refused,
                },
            ),
            Err(refused) => Err(refused),
        }
    }

    /// The unconfirmed prepared `F` of `wallet` that `landed` is: the row its memo names
    /// ([`prepared_row`]), when it carries that row's instructions.
    pub async fn signed_as<F: MoneyFlow>(
        &self,
        wallet: &Wallet,
        landed: &LandedTransaction,
    ) -> Result<Option<prepared_transactions::Model>, ApiError> {
        use prepared_transactions::{Column, Entity};
        let Some(named) = landed
            .memo()
            .and_then(|memo| memo.parse::<PreparedId>().ok())
        else {
            return Ok(None);
        };
        let mut rows: Vec<_> = Entity::find_by_id(named.to_string())
            .filter(Column::Kind.eq(F::KIND))
            .filter(Column::Wallet.eq(wallet.to_string()))
            .filter(Column::Signature.is_null())
            .one(self.store.db())
            .await?
            .into_iter()
            .collect();
        Ok(carried_in(&rows, landed)?.map(|at| rows.swap_remove(at)))
    }

    /// Prepared transaction `id` of `F`, unless it was confirmed with another signature or
    /// `signature` confirmed another one. The signature is looked up before the prepared
    /// transaction, so a racing confirm that records in between is seen either way: as this
    /// prepared transaction's own signature (a replay), never as another's.
    pub async fn open<F: MoneyFlow>(
        &self,
        id: PreparedId,
        signature: &Base58Signature,
    ) -> Result<Opened<F::Params>, ApiError> {
        let db = self.store.db();
        let used = prepared_transactions::Entity::find()
            .filter(prepared_transactions::Column::Signature.eq(signature.to_string()))
            .one(db)
            .await?;
        let prepared = match used {
            Some(row) if row.id != id.to_string() => return Err(signature_already_used()),
            // Confirmed by this very signature: the row in hand is the prepared transaction.
            Some(row) if row.kind == F::KIND => Some(from_row(row)?),
            _ => load::<F>(db, id).await?,
        }
        .ok_or_else(|| ApiError::not_found("prepared transaction"))?;
        match prepared.signature {
            Some(stored) if stored == *signature => Ok(Opened::Replay(prepared)),
            Some(_) => Err(already_confirmed()),
            None => Ok(Opened::Unconfirmed(prepared)),
        }
    }

    /// Records a verified confirmation in one database transaction: marks the prepared
    /// transaction confirmed by `signature` (only if nothing confirmed it meanwhile), writes the
    /// flow's rows and queues the refresh of the changed accounts. A confirm that lost the race
    /// to another request answers from what that request recorded.
    pub async fn record<F: MoneyFlow>(
        &self,
        flow: &F,
        prepared: Prepared<F::Params>,
        signature: Base58Signature,
    ) -> Result<F::Confirmed, ApiError> {
        let db = self.store.db();
        let now = self.clock.now();
        let txn = self.store.begin_write().await?;
        if !mark_confirmed(&txn, prepared.id, &signature, now).await? {
            txn.rollback().await?;
            let winner = load::<F>(db, prepared.id)
                .await?
                .ok_or_else(|| ApiError::internal("a confirmed prepared transaction vanished"))?;
            return match winner.signature {
                Some(stored) if stored == signature => flow.answer(db, &winner, false).await,
                _ => Err(already_confirmed()),
            };
        }
        flow.record(&txn, &prepared, &signature, now).await?;
        let changed = flow.changed(&prepared);
        let refresh = if changed.is_empty() {
            None
        } else {
            let job = RefreshAccounts {
                addresses: changed.clone(),
            };
            Some(crate::jobs::enqueue(&txn, &job, now, now).await?)
        };
        txn.commit().await?;
        if let Some(job) = refresh {
            self.refresh_now(job, &changed).await;
        }
        self.jobs_wake.notify_one();
        let confirmed = Prepared {
            signature: Some(signature),
            ..prepared
        };
        flow.answer(db, &confirmed, true).await
    }

    /// Reads the accounts a confirmed move changed into the store before the confirm answers, so
    /// the next read shows the move (reads are cached only while nothing they read changed, and
    /// this write changes it). The queued refresh job `job` is the fallback: it is marked done
    /// when this succeeds, and does the work itself when the ledger could not be read now.
    async fn refresh_now(&self, job: i64, changed: &[Pubkey]) {
        match crate::chain::refresh::read_through(&self.store, self.ledger.as_ref(), changed).await
        {
            Ok(_) => {
                let now = self.clock.now();
                if let Err(error) =
                    crate::jobs::queue::complete_queued(self.store.db(), job, now).await
                {
                    tracing::warn!(%error, job, "the refresh's job could not be marked done");
                }
            }
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), job, "refresh after confirm deferred to its job");
            }
        }
    }

    /// Which of `rows` (prepared transactions, newest first) the transaction `signature`
    /// landed is: the first that [`verify`] accepts, `None` while it has not landed or when
    /// it carries none of them. For a confirm whose body does not name its prepared
    /// transaction, when the wallet prepared the same move more than once.
    pub async fn carried_by(
        &self,
        rows: &[prepared_transactions::Model],
        signature: &Base58Signature,
    ) -> Result<Option<usize>, ApiError> {
        match self.find_landed(signature).await? {
            Some(landed) => carried_in(rows, &landed),
            None => Ok(None),
        }
    }

    /// The transaction `signature` landed, if it has by now: one look, no waiting (for a
    /// lookup that has another way when it has not; the runner's check waits).
    pub async fn landed_now(
        &self,
        signature: &Base58Signature,
    ) -> Result<Option<LandedTransaction>, ApiError> {
        Ok(self.ledger.transaction(&signature.transaction()).await?)
    }

    /// The landed transaction, waiting up to the confirm wait for it to reach `confirmed`; 503
    /// `transaction_pending` when it does not.
    pub async fn landed(&self, signature: &Base58Signature) -> Result<LandedTransaction, ApiError> {
        self.find_landed(signature).await?.ok_or_else(|| {
            ApiError::unavailable(
                "transaction_pending",
                "the signature is not confirmed on the ledger yet; retry shortly",
            )
        })
    }

    /// The landed transaction, or `None` when it has not reached `confirmed` within the confirm
    /// wait (for a flow to which a missing transaction is a refusal rather than a wait).
    pub async fn find_landed(
        &self,
        signature: &Base58Signature,
    ) -> Result<Option<LandedTransaction>, ApiError> {
        let signature = signature.transaction();
        for attempt in 0..self.wait.attempts.max(1) {
            // The first look asks for the transaction itself: a node answers signature
            // statuses only for its recent slots (about 150, a minute or two), so a wallet
            // confirming later than that would never see a status, while `getTransaction`
            // finds a confirmed transaction however long ago it landed. Later looks poll the
            // cheap status and fetch the transaction once it is confirmed.
            let landed = if attempt == 0 {
                self.ledger.transaction(&signature).await
            } else {
                match self.ledger.signature_status(&signature).await {
                    Ok(Some(_)) => self.ledger.transaction(&signature).await,
                    Ok(None) => Ok(None),
                    Err(error) => Err(error),
                }
            };
            if let Some(landed) = landed.map_err(ApiError::from)? {
                return Ok(Some(landed));
            }
            if attempt + 1 < self.wait.attempts {
                tokio::time::sleep(self.wait.interval).await;
            }
        }
        Ok(None)
    }
}

/// The prepared transaction `id` of `F`, typed.
async fn load<F: MoneyFlow>(
    db: &DatabaseConnection,
    id: PreparedId,
) -> Result<Option<Prepared<F::Params>>, ApiError> {
    prepared_transactions::Entity::find_by_id(id.to_string())
        .filter(prepared_transactions::Column::Kind.eq(F::KIND))
        .one(db)
        .await?
        .map(from_row)
        .transpose()
}

/// A stored prepared transaction, typed.
fn from_row<P: DeserializeOwned>(
    row: prepared_transactions::Model,
) -> Result<Prepared<P>, ApiError> {
    Ok(Prepared {
        id: row.id.parse().map_err(ApiError::internal)?,
        wallet: row.wallet.parse().map_err(ApiError::internal)?,
        params: serde_json::from_value(row.params).map_err(ApiError::internal)?,
        signature: row
            .signature
            .as_deref()
            .map(str::parse)
            .transpose()
            .map_err(ApiError::internal)?,
        message: row.message,
    })
}

/// The prepared transaction a signature already confirmed, if any (publish names its
/// transaction by signature alone).
pub async fn confirmed_by<F: MoneyFlow>(
    db: &DatabaseConnection,
    signature: &Base58Signature,
) -> Result<Option<Prepared<F::Params>>, ApiError> {
    let row = prepared_transactions::Entity::find()
        .filter(prepared_transactions::Column::Signature.eq(signature.to_string()))
        .filter(prepared_transactions::Column::Kind.eq(F::KIND))
        .one(db)
        .await?;
    row.map(from_row).transpose()
}

fn signature_already_used() -> ApiError {
    ApiError::coded(
        StatusCode::CONFLICT,
        "signature_already_used",
        "this signature confirmed another prepared transaction",
    )
}

fn already_confirmed() -> ApiError {
    ApiError::coded(
        StatusCode::CONFLICT,
        "already_confirmed",
        "this prepared transaction was confirmed with another signature",
    )
}

/// Marks `id` confirmed by `signature`; `false` when another request confirmed it first. Every
/// prepared message is its own (its memo), but rows prepared before the memo could hold the
/// same message (one wallet, the same instructions, one cached blockhash), so one signature
/// could verify for both: the unique signature column lets only one record it, and the other
/// is refused as `signature_already_used`.
async fn mark_confirmed(
    db: &impl ConnectionTrait,
    id: PreparedId,
    signature: &Base58Signature,
    now: i64,
) -> Result<bool, ApiError> {
    use prepared_transactions::{Column, Entity};
    let updated = Entity::update_many()
        .col_expr(Column::Status, "confirmed".into())
        .col_expr(Column::Signature, Some(signature.to_string()).into())
        .col_expr(Column::ConfirmedAt, Some(now).into())
        .filter(Column::Id.eq(id.to_string()))
        .filter(Column::Signature.is_null())
        .exec(db)
        .await
        .map_err(|e| match e.sql_err() {
            Some(SqlErr::UniqueConstraintViolation(_)) => signature_already_used(),
            _ => ApiError::from(e),
        })?;
    Ok(updated.rows_affected == 1)
}

/// Accepts `landed` for `prepared`: no error, paid by its wallet, its instructions in order.
pub fn verify<P>(prepared: &Prepared<P>, landed: &LandedTransaction) -> Result<(), ApiError> {
    if let Some(error) = &landed.error {
        return Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "transaction_failed",
            "the transaction landed with an error; nothing was recorded",
        )
        .with("ledger_error", error.as_str()));
    }
    let expected = prepared_instructions(&prepared.message)?;
    if landed.fee_payer != prepared.wallet.pubkey()
        || !carries_in_order(&landed.instructions, &expected)
    {
        return Err(mismatch());
    }
    Ok(())
}

/// The refusal of a signature that landed another prepared transaction of the wallet's, `id`.
fn signed_for_another(id: &str) -> ApiError {
    ApiError::coded(
        StatusCode::BAD_REQUEST,
        "transaction_mismatch",
        "the signed transaction is another prepared transaction of this wallet's",
    )
    .with("prepared_id", id)
}

fn mismatch() -> ApiError {
    ApiError::coded(
        StatusCode::BAD_REQUEST,
        "transaction_mismatch",
        "the signed transaction is not the prepared one",
    )
}

/// A stored prepared message, legacy or v0 (the versioned encoding reads a legacy message as
/// such: its first byte has no version bit).
fn stored_message(message: &[u8]) -> Result<solana_message::VersionedMessage, ApiError> {
    bincode::deserialize(message).map_err(ApiError::internal)
}

/// The instructions of a stored prepared message.
fn prepared_instructions(message: &[u8]) -> Result<Vec<LandedInstruction>, ApiError> {
    let message = stored_message(message)?;
    let tx = VersionedTransaction {
        signatures: vec![
            solana_signature::Signature::default();
            usize::from(message.header().num_required_signatures)
        ],
        message,
    };
    Ok(LandedTransaction::new(0, None, &tx)
        .map_err(ApiError::internal)?
        .instructions)
}

/// Whether `landed`, once compute-budget instructions are set aside, is exactly `expected`.
fn carries_in_order(landed: &[LandedInstruction], expected: &[LandedInstruction]) -> bool {
    landed
        .iter()
        .filter(|ix| ix.program != COMPUTE_BUDGET_PROGRAM)
        .eq(expected.iter())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sea_orm::ActiveValue::Set;

    fn ix(program: Pubkey, data: u8) -> LandedInstruction {
        LandedInstruction {
            program,
            accounts: vec![Pubkey::new_from_array([7; 32])],
            data: vec![data],
        }
    }

    #[test]
    fn compute_budget_instructions_may_be_added_but_nothing_else() {
        let program = Pubkey::new_unique();
        let expected = vec![ix(program, 1), ix(program, 2)];
        let budget = ix(COMPUTE_BUDGET_PROGRAM, 9);
        assert!(carries_in_order(&expected, &expected));
        assert!(carries_in_order(
            &[budget.clone(), ix(program, 1), ix(program, 2)],
            &expected
        ));
        assert!(!carries_in_order(
            &[ix(program, 2), ix(program, 1)],
            &expected
        ));
        assert!(!carries_in_order(&[ix(program, 1)], &expected));
        assert!(!carries_in_order(
            &[ix(program, 1), ix(program, 2), ix(Pubkey::new_unique(), 3)],
            &expected
        ));
        assert!(!carries_in_order(
            &[ix(program, 1), ix(program, 3)],
            &expected
        ));
    }

    #[test]
    fn a_stored_message_gives_back_its_instructions() {
        let wallet = Pubkey::new_unique();
        let back = narrative_sdk::shield::back_shield(
            wallet,
            &[3; 32],
            narrative_sdk::shield_vault::state::ShieldSide::Safe,
            100_000_000,
        );
        let tx = narrative_sdk::tx::unsigned_transaction(
            std::slice::from_ref(&back),
            &wallet,
            solana_hash::Hash::new_from_array([1; 32]),
        );
        let stored = bincode::serialize(&tx.message).unwrap();
        let instructions = prepared_instructions(&stored).unwrap();
        assert_eq!(instructions.len(), 1);
        assert_eq!(instructions[0].program, back.program_id);
        assert_eq!(instructions[0].data, back.data);
        let accounts: Vec<Pubkey> = back.accounts.iter().map(|a| a.pubkey).collect();
        assert_eq!(instructions[0].accounts, accounts);
        // A v0 message (lend_c's) reads back as the same instructions.
        let v0 = narrative_sdk::tx::unsigned_v0_transaction(
            std::slice::from_ref(&back),
            &wallet,
            solana_hash::Hash::new_from_array([1; 32]),
        )
        .unwrap();
        let stored = bincode::serialize(&v0.message).unwrap();
        assert_eq!(prepared_instructions(&stored).unwrap(), instructions);
    }

    /// A flow that prepares whatever it is given.
    struct Plain;

    #[async_trait::async_trait]
    impl MoneyFlow for Plain {
        const KIND: &'static str = "plain";
        type Params = ();
        type Confirmed = ();

        fn component(&self, _: &()) -> Component {
            Component::Defi
        }

        fn changed(&self, _: &Prepared<()>) -> Vec<Pubkey> {
            vec![]
        }

        async fn answer(
            &self,
            _: &DatabaseConnection,
            _: &Prepared<()>,
            _: bool,
        ) -> Result<(), ApiError> {
            Ok(())
        }
    }

    /// Two prepares of one move on one blockhash are two messages, each ending with the memo
    /// of its own id; a transaction over the packet is refused rather than handed out.
    #[test]
    fn every_prepared_message_is_its_own_and_fits_a_packet() {
        let wallet = Wallet::from(Pubkey::new_unique());
        let blockhash = Hash::new_from_array([4; 32]);
        let back = narrative_sdk::shield::back_shield(
            wallet.pubkey(),
            &[3; 32],
            narrative_sdk::shield_vault::state::ShieldSide::Safe,
            100_000_000,
        );
        let prepare = |instructions: &[Instruction]| {
            prepared_row(
                &Plain,
                blockhash,
                &wallet,
                instructions,
                &(),
                &[],
                1_800_000_000,
            )
        };
        let (first, first_unsigned) = prepare(std::slice::from_ref(&back)).unwrap();
        let (second, _) = prepare(std::slice::from_ref(&back)).unwrap();
        assert_ne!(first.message, second.message);
        let carried = prepared_instructions(&first.message).unwrap();
        assert_eq!(carried.len(), 2);
        assert_eq!(carried[0].data, back.data);
        assert_eq!(carried[1].program, narrative_sdk::memo::MEMO_PROGRAM);
        assert!(carried[1].accounts.is_empty());
        assert_eq!(carried[1].data, first_unsigned.id.to_string().as_bytes());
        assert_eq!(first.id, first_unsigned.id.to_string());
        // The memo costs 71 bytes: its program's key, and the instruction with a 36-byte id.
        let bare = narrative_sdk::tx::unsigned_transaction(
            std::slice::from_ref(&back),
            &wallet.pubkey(),
            blockhash,
        );
        let wire = narrative_sdk::tx::from_base64(&first_unsigned.transaction).unwrap();
        assert_eq!(
            narrative_sdk::tx::wire_size(&wire) - narrative_sdk::tx::wire_size(&bare),
            71
        );

        // 1,232 bytes at most: a memo that takes the rest of the packet is refused.
        let filler = |len: usize| narrative_sdk::memo::memo(&"x".repeat(len));
        let size = |len: usize| {
            let mut ixs = vec![back.clone(), filler(len)];
            ixs.push(narrative_sdk::memo::memo(&first_unsigned.id.to_string()));
            bincode::serialized_size(&narrative_sdk::tx::unsigned_transaction(
                &ixs,
                &wallet.pubkey(),
                blockhash,
            ))
            .unwrap()
        };
        let fits = (0..1232)
            .rev()
            .find(|len| size(*len) <= PACKET_BYTES)
            .unwrap();
        assert!(prepare(&[back.clone(), filler(fits)]).is_ok());
        let Err(refused) = prepare(&[back.clone(), filler(fits + 1)]) else {
            panic!("a transaction over the packet was prepared");
        };
        assert_eq!(refused.status, StatusCode::INTERNAL_SERVER_ERROR);
    }

    /// Two prepared transactions with one message verify for one signature: the first to
    /// record it wins, the second is refused as `signature_already_used` (a 409, not the
    /// store's unique-constraint error as a 500), on SQLite and on Postgres.
    #[tokio::test]
    async fn a_signature_records_one_prepared_transaction_only() {
        let db = narrative_store::testing::TestDb::new().await;
        let ids = [PreparedId::new_random(), PreparedId::new_random()];
        for id in ids {
            prepared_transactions::Entity::insert(prepared_transactions::ActiveModel {
                id: Set(id.to_string()),
                kind: Set("binary_back".into()),
                wallet: Set(Pubkey::new_unique().to_string()),
                message: Set(vec![1, 2, 3]),
                params: Set(serde_json::json!({})),
                status: Set("prepared".into()),
                signature: Set(None),
                error: Set(None),
                created_at: Set(1),
                confirmed_at: Set(None),
                blockhash: Set(None),
            })
            .exec_without_returning(db.store.db())
            .await
            .unwrap();
        }
        let signature: Base58Signature = bs58::encode([9u8; 64]).into_string().parse().unwrap();
        assert!(mark_confirmed(db.store.db(), ids[0], &signature, 5)
            .await
            .unwrap());
        assert!(
            !mark_confirmed(db.store.db(), ids[0], &signature, 6)
                .await
                .unwrap(),
            "confirmed already"
        );
        let refused = mark_confirmed(db.store.db(), ids[1], &signature, 6)
            .await
            .unwrap_err();
        assert_eq!(refused.status, StatusCode::CONFLICT);
        assert_eq!(refused.code(), "signature_already_used");
    }
}
