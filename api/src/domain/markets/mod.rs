//! Native binary markets created through the api (spec 4.13 `POST /v1/markets`).

pub mod creation;
