//! Who is calling: the TCP peer's address. Forwarding headers are not trusted, since any client
//! can set them; a deployment behind a proxy terminates there and sees the proxy.

use std::net::IpAddr;

use poem::Request;

pub fn client_ip(req: &Request) -> Option<IpAddr> {
    req.remote_addr().as_socket_addr().map(|addr| addr.ip())
}
