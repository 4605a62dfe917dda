//! How an API server's refusal reads in a log line or a pod's condition.

/// A kube error with its causes, in one line.
pub fn error_text(e: &kube::Error) -> String {
    if let kube::Error::Api(s) = e {
        return format!("{} ({} {})", s.message, s.code, s.reason);
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        source = s.source();
    }
    text
}
