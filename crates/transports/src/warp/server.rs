//! The memory mock's TCP server, in two I/O models.
//!
//! Both serve any number of clients at once against one shared [`Device`] and run
//! the same per-connection state machine ([`MockConn`]); they differ in how they
//! wait for sockets:
//!
//! * [`IoModel::Epoll`] (the default): one thread, non-blocking sockets and a
//!   level-triggered `epoll` set. For each readable socket it reads what is there
//!   (at most 64 KiB per turn, so a busy client cannot starve the others), answers
//!   every whole frame, and sends all answers of that batch in one `send`. A client
//!   that does not read its answers is never waited on: its pending output is kept,
//!   the loop asks for `EPOLLOUT` and stops reading that client until its output
//!   drained below 256 KiB (back-pressure per client, not for the server).
//! * [`IoModel::Threads`]: a thread per connection doing blocking `read`/`write`,
//!   the device behind a mutex. A slow client stalls only its own thread.
//!
//! Why the event loop is the default: in `xferbench study warp-pipe` (the same
//! workload against both models, 1 to 506 client threads, blocking per-thread and
//! pipelined connections) both serve the same rates within the run-to-run noise, and
//! with many connections the event loop needs less server CPU, with no thread, stack
//! or lock per connection and one `send` per batch of answers. So the event loop is
//! the default and the thread model an option. One event-loop thread competing with
//! hundreds of runnable client threads on the same cores gets a small share of CPU;
//! batching clients (few threads) avoid that. The figures are in
//! docs/studies/warp-pipe.md, "The memory mock's I/O model: measured".
//!
//! warp-pipe's own server (`src/server.c`) calls `select()` over every descriptor,
//! then reads one frame per readable descriptor per turn, which limits it to
//! `FD_SETSIZE` (1024) descriptors and one frame per client per `select`.
//!
//! Shutdown: [`Server::run`] returns within 100 ms of `stop` becoming true, closing
//! every connection.

use super::crc::CrcKind;
use super::layout::{MAX_FRAME_LEN, MAX_PAYLOAD};
use super::mock::{ConnStats, Device, MockConfig, MockConfigError, MockConn};
use rustix::event::epoll;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Default TCP port of Warp Pipe (warp-pipe's `SERVER_PORT_NUM`).
pub const DEFAULT_PORT: u16 = 2115;

/// How often blocked calls look at the stop flag.
const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// The most read from one client per turn of the event loop.
const READ_CHUNK: usize = 64 * 1024;
/// Pending output above which the event loop stops reading a client.
const OUTPUT_HIGH_WATER: usize = 256 * 1024;

/// How the server waits for its sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoModel {
    /// One thread, `epoll` over non-blocking sockets.
    #[default]
    Epoll,
    /// One thread per connection, blocking I/O.
    Threads,
}

xferbench_params::choices!(IoModel {
    Epoll => "epoll": "one thread, epoll over non-blocking sockets",
    Threads => "threads": "a thread per connection, blocking I/O",
});

/// `io`: the memory mock's I/O model.
pub const IO: crate::ParamDef = crate::ParamDef::choice(
    "io",
    <IoModel as xferbench_params::Choices>::CHOICES,
    "epoll",
    "the memory mock's I/O model",
);

/// What to serve and how.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// CRC implementation for checking and computing LCRC and CRC16.
    pub crc: CrcKind,
    /// The device.
    pub device: MockConfig,
    /// The I/O model.
    pub io: IoModel,
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The device configuration is invalid.
    #[error(transparent)]
    Config(#[from] MockConfigError),
    /// A socket call failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

fn io_err(what: &'static str) -> impl FnOnce(io::Error) -> ServerError {
    move |source| ServerError::Io { what, source }
}

/// What a server did until it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Connections accepted.
    pub connections: u64,
    /// Connections closed because of bad input.
    pub closed_on_error: u64,
    /// The counters of all connections.
    pub totals: ConnStats,
}

/// A bound, not yet running, memory-mock server.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    cfg: ServerConfig,
    device: Device,
}

impl Server {
    /// Validates the device and binds the listening socket.
    pub fn bind(cfg: ServerConfig) -> Result<Server, ServerError> {
        let device = Device::new(&cfg.device)?;
        let listener = TcpListener::bind(cfg.listen).map_err(io_err("bind"))?;
        listener
            .set_nonblocking(true)
            .map_err(io_err("set non-blocking"))?;
        Ok(Server {
            listener,
            cfg,
            device,
        })
    }

    /// The address actually bound (with the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `stop` is set.
    pub fn run(self, stop: &AtomicBool) -> Result<ServerStats, ServerError> {
        match self.cfg.io {
            IoModel::Epoll => run_epoll(self, stop),
            IoModel::Threads => run_threads(self, stop),
        }
    }
}

fn configure(stream: &TcpStream) -> io::Result<()> {
    // Like warp-pipe: no Nagle delay, every answer leaves at once.
    stream.set_nodelay(true)
}

/// One client of the event loop.
struct Client {
    stream: TcpStream,
    conn: MockConn,
    input: Vec<u8>,
    /// Bytes of `input` holding data.
    filled: usize,
    output: Vec<u8>,
    /// Bytes of `output` already sent.
    sent: usize,
    want_write: bool,
}

impl Client {
    fn new(stream: TcpStream, crc: CrcKind) -> Self {
        Client {
            stream,
            conn: MockConn::new(crc),
            input: vec![0; READ_CHUNK + MAX_FRAME_LEN],
            filled: 0,
            output: Vec::with_capacity(2 * (MAX_FRAME_LEN + 7)),
            sent: 0,
            want_write: false,
        }
    }

    fn pending(&self) -> usize {
        self.output.len() - self.sent
    }

    /// Reads once and answers. `Ok(false)`: close the connection.
    fn on_readable(&mut self, dev: &mut Device, stats: &mut ServerStats) -> io::Result<bool> {
        if self.pending() > OUTPUT_HIGH_WATER {
            return Ok(true);
        }
        let room = self.input.len() - self.filled;
        let n = match self
            .stream
            .read(&mut self.input[self.filled..self.filled + room.min(READ_CHUNK)])
        {
            Ok(0) => return Ok(false),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(true),
            Err(e) => return Err(e),
        };
        self.filled += n;
        let progress = self
            .conn
            .process(dev, &self.input[..self.filled], &mut self.output);
        self.input.copy_within(progress.consumed..self.filled, 0);
        self.filled -= progress.consumed;
        if progress.close.is_some() {
            stats.closed_on_error += 1;
            let _ = self.flush();
            return Ok(false);
        }
        self.flush()?;
        Ok(true)
    }

    /// Sends what it can without blocking.
    fn flush(&mut self) -> io::Result<()> {
        while self.sent < self.output.len() {
            match self.stream.write(&self.output[self.sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.sent == self.output.len() {
            self.output.clear();
            self.sent = 0;
        } else if self.sent > MAX_PAYLOAD * 16 {
            self.output.drain(..self.sent);
            self.sent = 0;
        }
        Ok(())
    }
}

const LISTENER_TOKEN: u64 = u64::MAX;

fn run_epoll(server: Server, stop: &AtomicBool) -> Result<ServerStats, ServerError> {
    let Server {
        listener,
        cfg,
        mut device,
    } = server;
    let ep =
        epoll::create(epoll::CreateFlags::CLOEXEC).map_err(|e| io_err("epoll_create")(e.into()))?;
    epoll::add(
        &ep,
        &listener,
        epoll::EventData::new_u64(LISTENER_TOKEN),
        epoll::EventFlags::IN,
    )
    .map_err(|e| io_err("epoll_ctl")(e.into()))?;
    let mut stats = ServerStats::default();
    let mut clients: Vec<Option<Client>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut events = Vec::with_capacity(256);
    let timeout = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: POLL_INTERVAL.as_nanos() as _,
    };
    while !stop.load(Ordering::Relaxed) {
        events.clear();
        match epoll::wait(
            &ep,
            rustix::buffer::spare_capacity(&mut events),
            Some(&timeout),
        ) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(io_err("epoll_wait")(e.into())),
        }
        for ev in &events {
            let token = ev.data.u64();
            if token == LISTENER_TOKEN {
                accept_all(&listener, &ep, &cfg, &mut clients, &mut free, &mut stats);
                continue;
            }
            let idx = token as usize;
            let Some(Some(client)) = clients.get_mut(idx) else {
                continue;
            };
            let flags = ev.flags;
            let mut keep = !flags.intersects(epoll::EventFlags::ERR);
            if keep && flags.contains(epoll::EventFlags::OUT) {
                keep = client.flush().is_ok();
            }
            if keep && flags.intersects(epoll::EventFlags::IN | epoll::EventFlags::HUP) {
                keep = client.on_readable(&mut device, &mut stats).unwrap_or(false);
            }
            if keep {
                let want = client.pending() > 0;
                if want != client.want_write {
                    client.want_write = want;
                    let mut fl = epoll::EventFlags::IN;
                    if want {
                        fl |= epoll::EventFlags::OUT;
                    }
                    keep = epoll::modify(&ep, &client.stream, epoll::EventData::new_u64(token), fl)
                        .is_ok();
                }
            }
            if !keep {
                if let Some(c) = clients[idx].take() {
                    let _ = epoll::delete(&ep, &c.stream);
                    stats.totals.add(c.conn.stats());
                }
                free.push(idx);
            }
        }
    }
    for c in clients.into_iter().flatten() {
        stats.totals.add(c.conn.stats());
    }
    Ok(stats)
}

fn accept_all(
    listener: &TcpListener,
    ep: &impl std::os::fd::AsFd,
    cfg: &ServerConfig,
    clients: &mut Vec<Option<Client>>,
    free: &mut Vec<usize>,
    stats: &mut ServerStats,
) {
    loop {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            // WouldBlock: all taken; other errors (EMFILE, aborted): try next turn.
            Err(_) => return,
        };
        if configure(&stream).is_err() || stream.set_nonblocking(true).is_err() {
            continue;
        }
        let idx = free.pop().unwrap_or_else(|| {
            clients.push(None);
            clients.len() - 1
        });
        if epoll::add(
            ep,
            &stream,
            epoll::EventData::new_u64(idx as u64),
            epoll::EventFlags::IN,
        )
        .is_err()
        {
            free.push(idx);
            continue;
        }
        stats.connections += 1;
        clients[idx] = Some(Client::new(stream, cfg.crc));
    }
}

fn run_threads(server: Server, stop: &AtomicBool) -> Result<ServerStats, ServerError> {
    let Server {
        listener,
        cfg,
        device,
    } = server;
    let device = Arc::new(Mutex::new(device));
    let totals = Arc::new(Mutex::new(ServerStats::default()));
    let mut stats = ServerStats::default();
    std::thread::scope(|scope| {
        while !stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, _)) => {
                    if configure(&stream).is_err()
                        || stream.set_nonblocking(false).is_err()
                        || stream.set_read_timeout(Some(POLL_INTERVAL)).is_err()
                    {
                        continue;
                    }
                    stats.connections += 1;
                    let device = Arc::clone(&device);
                    let totals = Arc::clone(&totals);
                    let crc = cfg.crc;
                    scope.spawn(move || serve_blocking(stream, crc, &device, &totals, stop));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // Wait for the next connection without spinning.
                    let _ = rustix::event::poll(
                        &mut [rustix::event::PollFd::new(
                            &listener,
                            rustix::event::PollFlags::IN,
                        )],
                        Some(&rustix::time::Timespec {
                            tv_sec: 0,
                            tv_nsec: POLL_INTERVAL.as_nanos() as _,
                        }),
                    );
                }
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    });
    let t = *totals.lock().unwrap_or_else(|p| p.into_inner());
    stats.closed_on_error = t.closed_on_error;
    stats.totals = t.totals;
    Ok(stats)
}

fn serve_blocking(
    mut stream: TcpStream,
    crc: CrcKind,
    device: &Mutex<Device>,
    totals: &Mutex<ServerStats>,
    stop: &AtomicBool,
) {
    let mut conn = MockConn::new(crc);
    let mut input = vec![0u8; READ_CHUNK + MAX_FRAME_LEN];
    let mut filled = 0;
    let mut output = Vec::with_capacity(2 * MAX_FRAME_LEN);
    let mut bad = false;
    while !stop.load(Ordering::Relaxed) {
        let n = match stream.read(&mut input[filled..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                continue;
            }
            Err(_) => break,
        };
        filled += n;
        let progress = {
            let mut dev = device.lock().unwrap_or_else(|p| p.into_inner());
            conn.process(&mut dev, &input[..filled], &mut output)
        };
        input.copy_within(progress.consumed..filled, 0);
        filled -= progress.consumed;
        if stream.write_all(&output).is_err() {
            break;
        }
        output.clear();
        if progress.close.is_some() {
            bad = true;
            break;
        }
    }
    let mut t = totals.lock().unwrap_or_else(|p| p.into_inner());
    t.totals.add(conn.stats());
    if bad {
        t.closed_on_error += 1;
    }
}
