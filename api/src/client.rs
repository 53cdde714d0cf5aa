//! Who is calling: the TCP peer's address. Forwarding headers are not trusted, since any client
//! can set them; a deployment behind a proxy terminates there and sees the proxy.

use poem::Request;

pub fn client_ip(req: &Request) -> Option<String> {
    req.remote_addr()
        .as_socket_addr()
        .map(|addr| addr.ip().to_string())
}
