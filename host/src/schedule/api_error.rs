//! How an API server's refusal reads in a log line or a pod's condition.

/// A kube error with its causes, in one line.
pub fn error_text(e: &kube::Error) -> String {
    if let kube::Error::Api(s) = e {
        return format!("{} ({} {})", s.message, s.code, s.reason);
    }
    crate::serve::informer::with_causes(e)
}
