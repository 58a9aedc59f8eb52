'use strict';
// The peers harness's drivers/ours.js (../shared/bench/peers), speaking protocol 2:
// hello says [1, 2] and snapshots that arrive as deltas are merged into the last full
// one of their (match, seat) as docs/protocol.md says ("Protocol 2"). Everything else
// is the harness's driver unchanged. scripts/bench_peers_protocol2.sh puts it in place.
// Node client for the cardserver wire protocol (docs/protocol.md): raw TCP,
// 4-byte big-endian length + one msgpack map (@msgpack/msgpack), TCP_NODELAY.
// One connection (session) per seat; a pair keeps its two connections across matches.
const net = require('net');
const { Encoder, Decoder } = require('@msgpack/msgpack');
const enc = new Encoder(); const dec = new Decoder();

class Conn {
  constructor(port, name) {
    this.port = port; this.name = name; this.nextId = 1;
    this.buf = Buffer.alloc(0); this.waiters = new Map(); // id -> resolve
    this.onSnapshot = null; this.closed = false;
    this.last = new Map();   // "match/seat" -> the last full snapshot (protocol 2)
  }
  merge(m) {                 // a delta -> the full snapshot (docs/protocol.md, protocol 2)
    const key = m.match + '/' + m.seat;
    let full = m;
    if (m.base !== undefined) {
      const prev = this.last.get(key);
      if (!prev || prev.seq !== m.base) throw new Error('delta against a snapshot not held');
      full = { ...prev };
      for (const [k, v] of Object.entries(m)) if (k !== 'base' && k !== 'view') full[k] = v;
      if (m.view) full.view = { ...prev.view, ...m.view };
    }
    this.last.delete(key);
    if (full.status !== 'finished') {
      this.last.set(key, full);
      if (this.last.size > 256) this.last.delete(this.last.keys().next().value);
    }
    return full;
  }
  open() {
    return new Promise((resolve, reject) => {
      this.sock = net.createConnection({ host: '127.0.0.1', port: this.port }, () => {
        this.sock.setNoDelay(true);
        this.send({ type: 'hello', protocol: [1, 2], name: this.name, client: 'peerbench/1' });
      });
      this.welcome = resolve;
      this.sock.on('data', (d) => this.data(d));
      this.sock.on('error', (e) => { if (!this.closed) reject(e); });
    });
  }
  send(msg) {
    const body = enc.encode(msg);
    const frame = Buffer.allocUnsafe(4 + body.length);
    frame.writeUInt32BE(body.length, 0); frame.set(body, 4);
    this.sock.write(frame);
  }
  request(msg) {
    const id = this.nextId++;
    return new Promise((resolve) => { this.waiters.set(id, resolve); this.send({ ...msg, id }); });
  }
  data(d) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    let off = 0;
    while (this.buf.length - off >= 4) {
      const n = this.buf.readUInt32BE(off);
      if (this.buf.length - off - 4 < n) break;
      const m = dec.decode(this.buf.subarray(off + 4, off + 4 + n));
      off += 4 + n;
      this.handle(m);
    }
    this.buf = off === this.buf.length ? Buffer.alloc(0) : this.buf.subarray(off);
  }
  handle(m) {
    switch (m.type) {
      case 'snapshot': { const full = this.merge(m); if (this.onSnapshot) this.onSnapshot(full); break; }
      case 'ok': case 'error': {
        const w = this.waiters.get(m.id);
        if (w) { this.waiters.delete(m.id); w(m); }
        else if (m.type === 'error' && m.code !== 'stale') console.error('ours: error', m);
        break;
      }
      case 'welcome': this.welcome(m); break;
      case 'ping': this.send({ type: 'pong', id: m.id }); break;
      default: break;
    }
  }
  close() { this.closed = true; this.sock.destroy(); }
}

class Seat {
  constructor(conn, match, seat) {
    this.conn = conn; this.match = match; this.seat = seat;
    this.state = { seq: -1, waiting: [], finished: false, active: false };
    this.cbs = [];
  }
  snapshot(m) {
    this.state = { seq: m.seq, waiting: m.view.waiting, finished: m.status === 'finished', active: m.status === 'active' };
    for (const cb of this.cbs) cb(this.state);
  }
  onState(cb) { this.cbs.push(cb); }
  bytes() { return this.conn.sock.bytesRead; }   // bytes received on this seat's connection
  flip() {   // fire and forget: the ok reply is consumed without a waiter
    this.conn.send({ type: 'intent', id: this.conn.nextId++, match: this.match, seq: this.state.seq, intent: { type: 'flip' } });
  }
}

function waitActive(seats) {
  return Promise.all(seats.map((s) => new Promise((res) => {
    if (s.state.active) return res();
    s.onState((st) => { if (st.active || st.finished) res(); });
  })));
}

let counter = 0;
function makeDriver(port) {
  return {
    name: 'cardserver',
    async newPair() {           // two sessions, reused for the pair's later matches
      const a = new Conn(port, 'a' + (++counter)), b = new Conn(port, 'b' + counter);
      await Promise.all([a.open(), b.open()]);
      const pair = { conns: [a, b], seats: null };
      const route = (c) => (m) => { const s = pair.bySession && pair.bySession.get(c)?.[m.match]; if (s) s.snapshot(m); };
      a.onSnapshot = route(a); b.onSnapshot = route(b);
      pair.bySession = new Map([[a, {}], [b, {}]]);
      return pair;
    },
    async newMatch(pair) {      // a creates a War match, b joins; resolves when both see it active
      const [a, b] = pair.conns;
      if (pair.seats) for (const [c] of pair.bySession) pair.bySession.set(c, {});
      const r = await a.request({ type: 'create', game: 'war', options: {} });
      const sa = new Seat(a, r.match, r.seat);
      pair.bySession.get(a)[r.match] = sa;
      const sbPending = new Seat(b, r.match, 1 - r.seat);
      pair.bySession.get(b)[r.match] = sbPending;
      const j = await b.request({ type: 'join', match: r.match });
      if (j.type !== 'ok') throw new Error('join failed ' + JSON.stringify(j));
      const seats = []; seats[sa.seat] = sa; seats[sbPending.seat] = sbPending;
      await waitActive(seats);
      pair.seats = seats;
      return seats;
    },
    async endMatch(pair) {},    // finished matches need nothing; the sessions stay
    closePair(pair) { for (const c of pair.conns) c.close(); },
  };
}
module.exports = makeDriver;
