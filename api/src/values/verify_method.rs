//! A verification method (spec 4.8): the identity pass, the scored passport, or a Solana
//! Attestation Service attestation.

use super::enum_value;

enum_value!(
    /// A verification method, in the order [`VerifyMethod::ALL`] recommends them.
    VerifyMethod,
    "verify_method",
    "`idpass` (a biometric identity pass), `passport` (a scored passport) or `sas` (an \
     attestation of the Solana Attestation Service).",
    [IdPass => "idpass", Passport => "passport", Sas => "sas"]
);
