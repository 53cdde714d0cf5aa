//! The parts of the service an operator can halt (spec 4.0 `system_halted`).

use super::enum_value;

enum_value!(
    /// A component whose writes an operator can halt.
    Component,
    "component",
    "A component whose writes can be halted.",
    [
        Shield => "shield",
        Binary => "binary",
        Markets => "markets",
        Agents => "agents",
        Narratives => "narratives",
        EchoPool => "echo_pool",
        Nft => "nft",
        Defi => "defi",
    ]
);
