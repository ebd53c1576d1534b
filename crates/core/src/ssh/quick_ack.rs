//! A TCP stream that acknowledges what it receives at once.
//!
//! sshd leaves Nagle's algorithm on for sessions without a terminal, so each small reply it
//! sends (a channel confirmation after its host-key announcement, output after a window adjust)
//! waits until the previous one is acknowledged. Linux delays that ACK by up to 40 ms, which on
//! a short command turned one round trip into two. Re-arming `TCP_QUICKACK` after every read
//! (the kernel drops the flag by itself) sends the ACK straight away. Elsewhere it is a plain
//! stream.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

pub(crate) struct QuickAckStream {
    inner: TcpStream,
}

impl QuickAckStream {
    pub(crate) fn new(inner: TcpStream) -> Self {
        let stream = Self { inner };
        stream.rearm();
        stream
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn rearm(&self) {
        // Best effort: without it the connection works, only slower.
        let _ = socket2::SockRef::from(&self.inner).set_tcp_quickack(true);
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn rearm(&self) {}
}

impl AsyncRead for QuickAckStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.rearm();
        }
        polled
    }
}

impl AsyncWrite for QuickAckStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
