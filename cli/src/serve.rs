//! `pgasync serve`: serves the demo page (`web/`) and the wasm package (`pkg/`) on
//! loopback. Only files under those two folders are served; `.wasm` goes out as
//! `application/wasm`, which browsers require for streaming compilation.
//! Ctrl-C shuts the server down gracefully.

use crate::args::Args;
use crate::CliError;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::path::PathBuf;
use std::sync::Arc;

struct Roots {
    web: PathBuf,
    pkg: PathBuf,
}

pub fn run(argv: &[String]) -> Result<(), CliError> {
    let a = Args::parse(argv, &["port", "bind", "web", "pkg"])?;
    let port: u16 = a.num("port")?.unwrap_or(8080);
    let bind = a.get("bind").unwrap_or("127.0.0.1").to_string();
    let roots =
        Roots { web: PathBuf::from(a.get("web").unwrap_or("web")), pkg: PathBuf::from(a.get("pkg").unwrap_or("pkg")) };
    if !roots.web.join("index.html").is_file() {
        return Err(CliError::Usage(format!(
            "{}/index.html not found (run from the repository root or pass --web)",
            roots.web.display()
        )));
    }
    if !roots.pkg.join("pgasync_bg.wasm").is_file() {
        return Err(CliError::Usage(format!(
            "{}/pgasync_bg.wasm not found: build it with `make pkg`",
            roots.pkg.display()
        )));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(e.to_string()))?;
    rt.block_on(serve(bind, port, roots))
}

async fn serve(bind: String, port: u16, roots: Roots) -> Result<(), CliError> {
    let app = Router::new()
        .route("/", get(|State(r): State<Arc<Roots>>| async move { send(r.web.join("index.html")).await }))
        .route(
            "/pkg/{*path}",
            get(|State(r): State<Arc<Roots>>, Path(p): Path<String>| async move { send_under(&r.pkg, &p).await }),
        )
        .route(
            "/{*path}",
            get(|State(r): State<Arc<Roots>>, Path(p): Path<String>| async move { send_under(&r.web, &p).await }),
        )
        .with_state(Arc::new(roots));
    let listener = tokio::net::TcpListener::bind((bind.as_str(), port))
        .await
        .map_err(|e| CliError::Failed(format!("cannot listen on {bind}:{port}: {e}")))?;
    let addr = listener.local_addr().map_err(|e| CliError::Failed(e.to_string()))?;
    println!("pgasync demo: http://{addr}/  (Ctrl-C to stop)");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
            println!("pgasync: shutting down");
        })
        .await
        .map_err(|e| CliError::Failed(e.to_string()))
}

/// Serves `root/rel` if `rel` stays inside `root`.
async fn send_under(root: &std::path::Path, rel: &str) -> Response {
    if rel.split('/').any(|part| part == ".." || part.starts_with('.')) {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    send(root.join(rel)).await
}

async fn send(path: PathBuf) -> Response {
    let ty = match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    };
    match tokio::fs::read(&path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, ty), (header::CACHE_CONTROL, "no-cache")], bytes).into_response(),
        Err(_) => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}
