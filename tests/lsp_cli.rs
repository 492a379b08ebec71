//! `kpol lsp` over stdio with raw JSON-RPC (the quick check; tests/lsp/ drives it with a real
//! client): initialize, a manifest's diagnostics on open and after an edit, a hover, a code
//! action, an unknown method answered with an error, malformed params answered, and a clean
//! shutdown (exit 0).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{Value, json};

const WORKSPACE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lsp/workspace");

struct Server {
    stdin: ChildStdin,
    messages: Receiver<Value>,
    child: std::process::Child,
}

impl Server {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kpol"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        len = n.parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                r.read_exact(&mut body).unwrap();
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        Self {
            stdin,
            messages,
            child,
        }
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message that `pick` accepts (others are skipped), within 20 s.
    fn wait(&self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        loop {
            match self.messages.recv_timeout(Duration::from_secs(20)) {
                Ok(m) if pick(&m) => return m,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => panic!("no {what} within 20 s"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed before {what}"),
            }
        }
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait(&format!("response {id}"), |m| m["id"] == json!(id))
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn diagnostics(&self, uri: &str, version: i64) -> Vec<Value> {
        let m = self.wait(&format!("diagnostics of {uri} v{version}"), |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == json!(version)
        });
        m["params"]["diagnostics"].as_array().unwrap().clone()
    }
}

fn file_uri(path: &str) -> String {
    format!("file://{path}")
}

#[test]
fn a_session_over_raw_json_rpc() {
    let root = std::fs::canonicalize(WORKSPACE).unwrap();
    let root = root.to_str().unwrap();
    let mut s = Server::start();
    let init = s.request(
        1,
        "initialize",
        json!({"processId": null, "rootUri": file_uri(root), "capabilities": {}}),
    );
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["hoverProvider"], json!(true), "{init}");
    assert_eq!(caps["codeActionProvider"], json!(true));
    assert_eq!(init["result"]["serverInfo"]["name"], "kpol");
    s.notify("initialized", json!({}));

    let uri = file_uri(&format!("{root}/manifests/web.yaml"));
    let text = std::fs::read_to_string(format!("{root}/manifests/web.yaml")).unwrap();
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
    );
    let diags = s.diagnostics(&uri, 1);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(
        d["code"],
        "require-resource-limits/autogen-validate-resources"
    );
    assert_eq!(d["severity"], 1);
    let line = text
        .lines()
        .position(|l| l.contains("- name: web"))
        .unwrap();
    assert_eq!(d["range"]["start"]["line"], json!(line));

    let hover = s.request(
        2,
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": 12}}),
    );
    let value = hover["result"]["contents"]["value"].as_str().unwrap();
    assert!(value.contains("Require resource limits"), "{value}");

    let actions = s.request(
        3,
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": line, "character": 10}, "end": {"line": line, "character": 10}},
               "context": {"diagnostics": []}}),
    );
    let titles: Vec<&str> = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.iter().any(|t| t.contains("apply mutation")),
        "{titles:?}"
    );
    // No create-file capability was announced: no PolicyException file is offered.
    assert!(
        !titles.iter().any(|t| t.contains("PolicyException")),
        "{titles:?}"
    );

    // An incremental edit: the limits typed in after the image line.
    let end = text.lines().count();
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": {"start": {"line": end, "character": 0},
                                             "end": {"line": end, "character": 0}},
                                   "text": "          resources:\n            limits:\n              cpu: 1\n              memory: 1Gi\n"}]}),
    );
    assert_eq!(s.diagnostics(&uri, 2), Vec::<Value>::new());

    let unknown = s.request(4, "textDocument/definition", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let bad = s.request(5, "textDocument/hover", json!({"nonsense": true}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");

    let down = s.request(6, "shutdown", Value::Null);
    assert!(down.get("error").is_none(), "{down}");
    s.notify("exit", Value::Null);
    drop(s.stdin);
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status}");
}
