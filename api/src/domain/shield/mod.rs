//! Shield (spec 4.14): coverage periods and their pool state from the index, the terms
//! acknowledgement every backer signs first, the gate's access log, backing (a prepared
//! `back_shield`) and partnership applications.

pub mod backing;
pub mod gate;
pub mod keeper;
pub mod partners;
pub mod probe_log;
pub mod protocols;
pub mod resolution;
pub mod terms;
