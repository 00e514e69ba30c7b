//! TLS for the relay, on both of its sides (rustls with the `ring` provider):
//! * to a PostgreSQL target: `tls = "disable" | "require" | "verify-full"`, as libpq's
//!   `sslmode` of the same names. `require` encrypts without checking who answers
//!   (libpq's `require` without a root certificate); `verify-full` checks the chain
//!   against `ca_file` (PEM) or, without one, the bundled Mozilla roots (webpki-roots),
//!   and the certificate's name against the target's host.
//! * to browsers (classroom mode): `--tls-cert FILE --tls-key FILE` makes the relay
//!   serve `https://` and `wss://` itself.
//!
//! Invariants: configurations are built once, when the relay starts, so a bad file is
//! a start-up error naming it, never a failure at a student's first connection; a
//! `verify-full` target is never reached without a verified certificate.
//!
//! Where it departs from libpq: only `disable`, `require` and `verify-full` (no
//! `allow`, `prefer`, `verify-ca`); `require` never checks a root certificate that
//! happens to be present (libpq's then acts as `verify-ca`), and `verify-full`
//! without `ca_file` trusts the bundled Mozilla roots, where libpq needs a root file.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Certificates and keys are small; a bigger file is not one.
const MAX_PEM_BYTES: usize = 1 << 20;

fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    crate::input::read_bytes(&path.display().to_string(), what, MAX_PEM_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// How the relay talks to a target: libpq's `sslmode` values it supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum TlsMode {
    Disable,
    Require,
    VerifyFull,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn pem_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = read_pem(path, "a certificate file")?;
    let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&bytes).collect();
    let certs = certs.map_err(|e| format!("{}: not a PEM certificate file: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: holds no certificate", path.display()));
    }
    Ok(certs)
}

/// The client configuration for a target (`None` for `disable`).
pub(crate) fn client_config(mode: TlsMode, ca_file: Option<&Path>) -> Result<Option<Arc<ClientConfig>>, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let config = match mode {
        TlsMode::Disable => return Ok(None),
        TlsMode::Require => {
            builder.dangerous().with_custom_certificate_verifier(Arc::new(Unverified(provider()))).with_no_client_auth()
        }
        TlsMode::VerifyFull => {
            let mut roots = RootCertStore::empty();
            match ca_file {
                Some(path) => {
                    for cert in pem_certs(path)? {
                        roots.add(cert).map_err(|e| format!("{}: {e}", path.display()))?;
                    }
                }
                None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    Ok(Some(Arc::new(config)))
}

/// The server configuration for `--tls-cert`/`--tls-key`.
pub(crate) fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let certs = pem_certs(cert)?;
    let key_bytes = read_pem(key, "a key file")?;
    let key = PrivateKeyDer::from_pem_slice(&key_bytes)
        .map_err(|e| format!("{}: not a PEM private key: {e}", key.display()))?;
    let config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("--tls-cert/--tls-key: {e}"))?;
    Ok(Arc::new(config))
}

/// The name a `verify-full` certificate must carry: the host part of `host:port`.
pub(crate) fn server_name(addr: &str) -> Result<ServerName<'static>, String> {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_string()).map_err(|_| format!("\"{host}\" is not a host name"))
}

/// `tls = "require"`: the channel is encrypted and the handshake's signatures are
/// checked, but not who signed the certificate (libpq's `sslmode=require`).
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A connection to a PostgreSQL server, in the clear or in TLS.
pub(crate) enum ServerStream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for ServerStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ServerStream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            ServerStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ServerStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            ServerStream::Plain(s) => Pin::new(s).poll_write(cx, data),
            ServerStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ServerStream::Plain(s) => Pin::new(s).poll_flush(cx),
            ServerStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ServerStream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            ServerStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
