//! `sift serve`'s connections: a deadline for a request's headers that
//! starts at the request's first byte.
//!
//! hyper's own `header_read_timeout` starts whenever the connection waits
//! for a request, so it also closes idle keep-alive connections, which
//! kube-scheduler's client keeps for 90 s and may reuse at the moment the
//! server closes them (a failed extender call). Here a client that sent
//! part of a request must finish its headers within the timeout; an idle
//! connection is left alone (hyper's timer, set far longer, closes it
//! eventually). Bodies have their own timeout, in the handlers.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How long an idle keep-alive connection is kept: longer than Go's
/// default `IdleConnTimeout` (90 s), so the client closes first.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(120);

enum Phase {
    /// Between requests: no deadline.
    Idle,
    /// A request's headers are arriving; `matched` counts the bytes of
    /// "\r\n\r\n" seen at the end so far.
    Headers {
        deadline: Pin<Box<tokio::time::Sleep>>,
        matched: u8,
    },
    /// Headers done: the body and the handler run under their own limits,
    /// until the response is written.
    Request,
}

/// A stream whose reads fail once a request's headers take longer than
/// `timeout` from their first byte.
pub struct HeaderDeadline<S> {
    inner: S,
    timeout: Duration,
    phase: Phase,
}

impl<S> HeaderDeadline<S> {
    pub fn new(inner: S, timeout: Duration) -> Self {
        HeaderDeadline {
            inner,
            timeout,
            phase: Phase::Idle,
        }
    }

    fn saw(&mut self, bytes: &[u8]) {
        const END: &[u8; 4] = b"\r\n\r\n";
        for &b in bytes {
            match &mut self.phase {
                Phase::Idle => {
                    self.phase = Phase::Headers {
                        deadline: Box::pin(tokio::time::sleep(self.timeout)),
                        matched: u8::from(b == END[0]),
                    };
                }
                Phase::Headers { matched, .. } => {
                    *matched = if b == END[*matched as usize] {
                        *matched + 1
                    } else {
                        u8::from(b == END[0])
                    };
                    if *matched == 4 {
                        self.phase = Phase::Request;
                    }
                }
                Phase::Request => return,
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for HeaderDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let read = buf.filled()[before..].to_vec();
                self.saw(&read);
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                if let Phase::Headers { deadline, .. } = &mut self.phase
                    && deadline.as_mut().poll(cx).is_ready()
                {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "request headers not received within --read-timeout",
                    )));
                }
                Poll::Pending
            }
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for HeaderDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            // A response: the next byte read starts the next request.
            self.phase = Phase::Idle;
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.phase = Phase::Idle;
        }
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_end_at_the_blank_line_even_split_across_reads() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut d = HeaderDeadline::new(tokio::io::empty(), Duration::from_secs(1));
            assert!(matches!(d.phase, Phase::Idle));
            d.saw(b"POST / HTTP/1.1\r\nHost: x\r");
            assert!(matches!(d.phase, Phase::Headers { .. }));
            d.saw(b"\n\r");
            assert!(matches!(d.phase, Phase::Headers { matched: 3, .. }));
            d.saw(b"\n{\"body\"");
            assert!(matches!(d.phase, Phase::Request));
            d.saw(b"\r\n\r\nmore body");
            assert!(matches!(d.phase, Phase::Request));
        });
    }
}
