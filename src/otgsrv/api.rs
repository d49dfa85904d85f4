//! The HTTP side: the router of the OTG operations ([`super::openapi::OPERATIONS`]) and
//! their handlers. A handler reads its body with a bound (a config up to
//! [`crate::otg::MAX_DOCUMENT`], one at a time; any other body 64 KiB), answers a refusal
//! with the model's `Error`, and leaves anything that blocks (a launch, a capture's socket)
//! to a blocking thread, never the server's own. A state change is made whole or not at
//! all, also when the client goes away mid-request.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next as MwNext;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, on};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::error::{ApiError, json};
use super::model::{
    CaptureRequest, CaptureState, ControlChoice, ControlState, MetricsChoice, MetricsRequest,
    PacketsChoice, Version, Warning,
};
use super::openapi::{self, MODEL_VERSION, NOT_SERVED, OPERATIONS};
use super::state::{Next, Shared};

/// The largest body other than a config's.
pub const MAX_SMALL_BODY: usize = 64 * 1024;

struct App {
    shared: Arc<Shared>,
    /// One config body read and parsed at a time: memory stays at one document's worth.
    configs: Semaphore,
}

type St = State<Arc<App>>;

/// The router of every operation, `/openapi.json`, and the model's error for the rest.
pub fn router(shared: Arc<Shared>) -> Router {
    let app = Arc::new(App {
        shared,
        configs: Semaphore::new(1),
    });
    let mut r: Router<Arc<App>> = Router::new();
    for op in OPERATIONS {
        let filter = if op.method == "get" {
            MethodFilter::GET
        } else {
            MethodFilter::POST
        };
        r = match op.id {
            "set_config" => r.route(op.path, on(filter, set_config)),
            "get_config" => r.route(op.path, on(filter, get_config)),
            "set_control_state" => r.route(op.path, on(filter, set_control_state)),
            "get_metrics" => r.route(op.path, on(filter, get_metrics)),
            "get_capture" => r.route(op.path, on(filter, get_capture)),
            _ => r.route(op.path, on(filter, get_version)),
        };
    }
    for (method, path, id, instead) in NOT_SERVED {
        let filter = if *method == "patch" {
            MethodFilter::PATCH
        } else {
            MethodFilter::POST
        };
        // On a path served with other methods: 405, with the methods it has.
        let allow = allowed(path);
        let status = if allow.is_empty() {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::METHOD_NOT_ALLOWED
        };
        let msg = format!(
            "{id} ({} {path}): not supported by upktgen ({instead})",
            method.to_uppercase()
        );
        r = r.route(
            path,
            on(filter, move || async move { refused(status, msg, allow) }),
        );
    }
    let touch = Arc::clone(&app.shared);
    r.route("/openapi.json", axum::routing::get(document))
        .fallback(|m: Method, uri: axum::http::Uri| async move {
            ApiError::refused(
                StatusCode::NOT_FOUND,
                format!(
                    "{m} {}: no such operation (GET /openapi.json lists them)",
                    uri.path()
                ),
            )
        })
        .method_not_allowed_fallback(|m: Method, uri: axum::http::Uri| async move {
            ApiError::refused(
                StatusCode::METHOD_NOT_ALLOWED,
                format!(
                    "{m} {}: not an operation of this path (GET /openapi.json lists them)",
                    uri.path()
                ),
            )
        })
        .layer(axum::middleware::from_fn(
            move |req: Request, next: MwNext| {
                touch.touch();
                next.run(req)
            },
        ))
        .with_state(app)
}

/// The methods the document has for `path` (`GET, POST`), empty for a path it has not.
fn allowed(path: &str) -> String {
    let mut m: Vec<String> = OPERATIONS
        .iter()
        .filter(|o| o.path == path)
        .map(|o| o.method.to_uppercase())
        .collect();
    if m.iter().any(|x| x == "GET") {
        m.push("HEAD".into());
    }
    m.join(", ")
}

/// The model's error with `status`, and an `Allow` header when `allow` names methods.
fn refused(status: StatusCode, msg: String, allow: String) -> Response {
    let mut r = ApiError::refused(status, msg).into_response();
    if let Ok(v) = axum::http::HeaderValue::from_str(&allow)
        && !allow.is_empty()
    {
        r.headers_mut().insert(header::ALLOW, v);
    }
    r
}

/// Reads a body of at most `max` bytes.
async fn read(body: Body, max: usize) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, max).await.map_err(|e| {
        let mut src: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        while let Some(s) = src {
            if s.is::<http_body_util::LengthLimitError>() {
                return ApiError::refused(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "the request body is larger than {max} bytes, the most this operation takes"
                    ),
                );
            }
            src = s.source();
        }
        ApiError::bad(format!("reading the request body: {e}"))
    })
}

/// `b` as JSON.
fn parse_value(b: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(b).map_err(|e| ApiError::bad(format!("the body is not JSON: {e}")))
}

/// `v` as a `T`, the error naming the schema.
fn typed<T: DeserializeOwned>(v: Value, schema: &str) -> Result<T, ApiError> {
    openapi::check_shape(&v, schema).map_err(|e| ApiError::bad(format!("{schema}: {e}")))?;
    serde_json::from_value(v).map_err(|e| ApiError::bad(format!("{schema}: {e}")))
}

/// Refuses a choice the model has at `at` and the server does not serve.
fn refuse_choice(v: &Value, at: &str, unserved: &[&str], why: &str) -> Result<(), ApiError> {
    let mut cur = v;
    for k in at.split('.').filter(|k| !k.is_empty()) {
        cur = &cur[k];
    }
    match cur["choice"].as_str() {
        Some(c) if unserved.contains(&c) => Err(ApiError::bad(format!(
            "{}choice: {c:?} not supported ({why})",
            if at.is_empty() {
                String::new()
            } else {
                format!("{at}.")
            }
        ))),
        _ => Ok(()),
    }
}

fn ok() -> Response {
    json(StatusCode::OK, &Warning::default())
}

fn done(r: Result<Response, ApiError>) -> Response {
    r.unwrap_or_else(IntoResponse::into_response)
}

/// Runs `f` on a blocking thread; it finishes even if the client goes away.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("a worker thread failed: {e}")))?
}

async fn set_config(State(app): St, body: Body) -> Response {
    done(
        async {
            let _one = app
                .configs
                .acquire()
                .await
                .map_err(|_| ApiError::internal("the server is stopping"))?;
            let b = read(body, crate::otg::MAX_DOCUMENT as usize).await?;
            let shared = Arc::clone(&app.shared);
            blocking(move || {
                let v = parse_value(&b)?;
                openapi::check_shape(&v, "Config")
                    .map_err(|e| ApiError::bad(format!("Config: {e}")))?;
                shared.set_config(v)
            })
            .await?;
            Ok(ok())
        }
        .await,
    )
}

async fn get_config(State(app): St) -> Response {
    let v = app.shared.loaded().map_or_else(
        || {
            crate::otg::Config {
                ports: vec![],
                layer1: vec![],
                flows: vec![],
            }
            .to_value()
        },
        |l| l.value.clone(),
    );
    json(StatusCode::OK, &v)
}

async fn set_control_state(State(app): St, body: Body) -> Response {
    done(
        async {
            let v = parse_value(&read(body, MAX_SMALL_BODY).await?)?;
            refuse_choice(&v, "", &["protocol"], "upktgen runs no protocols")?;
            refuse_choice(
                &v,
                "port",
                &["link"],
                "upktgen does not set links up or down",
            )?;
            let req: ControlState = typed(v, "Control.State")?;
            let shared = Arc::clone(&app.shared);
            match req.choice {
                ControlChoice::Traffic => {
                    let ft = req.traffic.and_then(|t| t.flow_transmit).ok_or_else(|| {
                        ApiError::bad("traffic.flow_transmit: missing (the choice is traffic)")
                    })?;
                    let names = ft.flow_names.unwrap_or_default();
                    match shared.transmit(ft.state, &names)? {
                        Next::Done => {}
                        Next::Wait(g) => shared.wait_ended(g).await?,
                        Next::Launch(job) => blocking(move || shared.launch(job)).await?,
                    }
                }
                ControlChoice::Port => {
                    let c = req.port.and_then(|p| p.capture).ok_or_else(|| {
                        ApiError::bad("port.capture: missing (the choice is port)")
                    })?;
                    let names = c.port_names.unwrap_or_default();
                    let start = c.state == CaptureState::Start;
                    blocking(move || shared.capture(start, &names)).await?;
                }
            }
            Ok(ok())
        }
        .await,
    )
}

async fn get_metrics(State(app): St, body: Body) -> Response {
    done(
        async {
            let v = parse_value(&read(body, MAX_SMALL_BODY).await?)?;
            if let Some(c) = v["choice"].as_str()
                && !matches!(c, "port" | "flow")
            {
                return Err(ApiError::bad(format!(
                    "choice: {c:?} not supported (upktgen has port and flow metrics)"
                )));
            }
            let req: MetricsRequest = typed(v, "Metrics.Request")?;
            let r = match req.choice.unwrap_or(MetricsChoice::Port) {
                MetricsChoice::Port => {
                    let rows = app.shared.port_metrics(&req.port.unwrap_or_default())?;
                    json!({"choice": "port_metrics", "port_metrics": rows})
                }
                MetricsChoice::Flow => {
                    let rows = app.shared.flow_metrics(&req.flow.unwrap_or_default())?;
                    json!({"choice": "flow_metrics", "flow_metrics": rows})
                }
            };
            Ok(json(StatusCode::OK, &r))
        }
        .await,
    )
}

async fn get_capture(State(app): St, body: Body) -> Response {
    done(
        async {
            let v = parse_value(&read(body, MAX_SMALL_BODY).await?)?;
            let req: CaptureRequest = typed(v, "Capture.Request")?;
            let (start, count) = match req.packets {
                Some(p) if p.choice == Some(PacketsChoice::Slice) => {
                    let i = p.slice.and_then(|s| s.initial);
                    let start = i.as_ref().and_then(|i| i.start).unwrap_or(1);
                    let count = i.as_ref().and_then(|i| i.count).unwrap_or(100);
                    if start == 0 || count == 0 {
                        return Err(ApiError::bad(
                            "packets.slice.initial: start and count are at least 1",
                        ));
                    }
                    (start - 1, count)
                }
                _ => (0, u64::MAX),
            };
            let shared = Arc::clone(&app.shared);
            let pcap = blocking(move || {
                shared.get_capture(
                    &req.port_name,
                    usize::try_from(start).unwrap_or(usize::MAX),
                    usize::try_from(count).unwrap_or(usize::MAX),
                )
            })
            .await?;
            Ok((
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/octet-stream")],
                pcap,
            )
                .into_response())
        }
        .await,
    )
}

async fn get_version() -> Response {
    json(
        StatusCode::OK,
        &Version {
            api_spec_version: MODEL_VERSION.into(),
            sdk_version: String::new(),
            app_version: env!("CARGO_PKG_VERSION").into(),
        },
    )
}

async fn document() -> Response {
    json(StatusCode::OK, &openapi::document())
}
