#!/usr/bin/env node
// A cardserver bot in JavaScript, written from docs/protocol.md alone: no code of
// the project is used, and no npm package (the MessagePack codec is below).
//
//   node minimal_bot.js HOST:PORT [war|datastructures] [--matches N] [--vs-bot NAME]
//                       [--option NAME=VALUE]... [--name NAME] [--protocol 1|2]
//                       [--think SECONDS] [--quiet]
//   node minimal_bot.js --selftest          check the codec against the document's dumps
//
// It says hello (protocol 1 and 2 offered: the server picks), queues for
// matchmaking (or, with --vs-bot, creates a match against a server bot), answers
// and sends heartbeats, plays the first legal intent of every snapshot that offers
// one under the seq rule, resumes its session when the connection drops, and
// prints one line per finished match on stdout:
//
//   finished match=m1a2b3c4d5 game=war seat=0 winner=1 outcome=loss reason=all_cards moves=612 mine=306 stale=0
//
// (`moves`: the match's accepted intents, its last seq; `mine`: the intents this
// bot had accepted; `stale`: its intents answered `stale` or `not_your_turn`.)
// Progress goes to stderr. Exit status: 0 every match played, 1 the server refused
// us for good (a fatal error, a bye we must not retry), 2 usage.
"use strict";

const net = require("net");

// ---------------------------------------------------------------------------
// MessagePack: the subset the protocol uses (no ext types; str never bin).

class DecodeError extends Error {}

// The client's decoder limits (docs/protocol.md, "What counts as a valid body").
const LIMITS = { body: 1 << 20, str: 262144, bin: 65536, array: 65536, map: 65536, depth: 32 };

function encode(value) {
  const chunks = [];
  const byte = (...bytes) => chunks.push(Buffer.from(bytes));
  const sized = (head, n, width) => {
    const b = Buffer.alloc(1 + width);
    b[0] = head;
    if (width === 1) b.writeUInt8(n, 1);
    else if (width === 2) b.writeUInt16BE(n, 1);
    else b.writeUInt32BE(n, 1);
    chunks.push(b);
  };
  const integer = (n) => {
    if (n >= 0) {
      if (n < 128) byte(n);
      else if (n < 0x100) byte(0xcc, n);
      else if (n < 0x10000) sized(0xcd, n, 2);
      else if (n < 0x100000000) sized(0xce, n, 4);
      else {
        const b = Buffer.alloc(9);
        b[0] = 0xcf;
        b.writeBigUInt64BE(BigInt(n), 1);
        chunks.push(b);
      }
    } else if (n >= -32) byte(n & 0xff);
    else {
      const b = Buffer.alloc(9);
      b[0] = 0xd3;
      b.writeBigInt64BE(BigInt(n), 1);
      chunks.push(b);
    }
  };
  const walk = (v) => {
    if (v === null || v === undefined) byte(0xc0);
    else if (v === false) byte(0xc2);
    else if (v === true) byte(0xc3);
    else if (typeof v === "bigint") integer(v);
    else if (typeof v === "number") {
      if (Number.isSafeInteger(v)) integer(v);
      else {
        if (!Number.isFinite(v)) throw new TypeError("floats must be finite");
        const b = Buffer.alloc(9);
        b[0] = 0xcb;
        b.writeDoubleBE(v, 1);
        chunks.push(b);
      }
    } else if (typeof v === "string") {
      const s = Buffer.from(v, "utf8");
      if (s.length < 32) byte(0xa0 | s.length);
      else if (s.length < 0x100) sized(0xd9, s.length, 1);
      else if (s.length < 0x10000) sized(0xda, s.length, 2);
      else sized(0xdb, s.length, 4);
      chunks.push(s);
    } else if (Array.isArray(v)) {
      if (v.length < 16) byte(0x90 | v.length);
      else if (v.length < 0x10000) sized(0xdc, v.length, 2);
      else sized(0xdd, v.length, 4);
      v.forEach(walk);
    } else if (typeof v === "object") {
      const keys = Object.keys(v).filter((k) => v[k] !== undefined);
      if (keys.length < 16) byte(0x80 | keys.length);
      else if (keys.length < 0x10000) sized(0xde, keys.length, 2);
      else sized(0xdf, keys.length, 4);
      for (const k of keys) {
        walk(k);
        walk(v[k]);
      }
    } else throw new TypeError(`cannot encode ${typeof v}`);
  };
  walk(value);
  return Buffer.concat(chunks);
}

// Exactly one value filling `buf`, within LIMITS; 64-bit integers beyond 2^53 stay BigInt.
function decode(buf) {
  let at = 0;
  const need = (n) => {
    if (at + n > buf.length) throw new DecodeError("truncated body");
  };
  const take = (n) => {
    need(n);
    const out = buf.subarray(at, at + n);
    at += n;
    return out;
  };
  const uint = (width) => {
    need(width);
    const n = width === 1 ? buf.readUInt8(at) : width === 2 ? buf.readUInt16BE(at) : buf.readUInt32BE(at);
    at += width;
    return n;
  };
  const big = (signed) => {
    need(8);
    const n = signed ? buf.readBigInt64BE(at) : buf.readBigUInt64BE(at);
    at += 8;
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
  };
  const str = (n) => {
    if (n > LIMITS.str) throw new DecodeError("string too long");
    return take(n).toString("utf8");
  };
  const bin = (n) => {
    if (n > LIMITS.bin) throw new DecodeError("binary too long");
    return Buffer.from(take(n));
  };
  const array = (n, depth) => {
    if (n > LIMITS.array) throw new DecodeError("array too long");
    const out = [];
    for (let i = 0; i < n; i++) out.push(value(depth + 1));
    return out;
  };
  const map = (n, depth) => {
    if (n > LIMITS.map) throw new DecodeError("map too long");
    const out = {};
    for (let i = 0; i < n; i++) {
      const k = value(depth + 1);
      if (typeof k !== "string") throw new DecodeError("map key is not a string");
      Object.defineProperty(out, k, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  const value = (depth) => {
    if (depth > LIMITS.depth) throw new DecodeError("nested too deep");
    const head = uint(1);
    if (head < 0x80) return head;
    if (head >= 0xe0) return head - 0x100;
    if ((head & 0xf0) === 0x80) return map(head & 0x0f, depth);
    if ((head & 0xf0) === 0x90) return array(head & 0x0f, depth);
    if ((head & 0xe0) === 0xa0) return str(head & 0x1f);
    switch (head) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: return bin(uint(1));
      case 0xc5: return bin(uint(2));
      case 0xc6: return bin(uint(4));
      case 0xca: { need(4); const f = buf.readFloatBE(at); at += 4; return f; }
      case 0xcb: { need(8); const f = buf.readDoubleBE(at); at += 8; return f; }
      case 0xcc: return uint(1);
      case 0xcd: return uint(2);
      case 0xce: return uint(4);
      case 0xcf: return big(false);
      case 0xd0: { need(1); const n = buf.readInt8(at); at += 1; return n; }
      case 0xd1: { need(2); const n = buf.readInt16BE(at); at += 2; return n; }
      case 0xd2: { need(4); const n = buf.readInt32BE(at); at += 4; return n; }
      case 0xd3: return big(true);
      case 0xd9: return str(uint(1));
      case 0xda: return str(uint(2));
      case 0xdb: return str(uint(4));
      case 0xdc: return array(uint(2), depth);
      case 0xdd: return array(uint(4), depth);
      case 0xde: return map(uint(2), depth);
      case 0xdf: return map(uint(4), depth);
      default: throw new DecodeError(`type byte 0x${head.toString(16)} (ext types are not allowed)`);
    }
  };
  const out = value(1);
  if (at !== buf.length) throw new DecodeError("trailing bytes after the value");
  return out;
}

// One frame: a 4-byte big-endian length, then the msgpack body.
function frame(message) {
  const body = encode(message);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

// Splits a byte stream into messages, however the frames arrive split or merged.
class FrameReader {
  constructor() {
    this.buf = Buffer.alloc(0);
  }

  push(data) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
  }

  // The next message, null when more bytes are needed; throws DecodeError.
  next() {
    if (this.buf.length < 4) return null;
    const n = this.buf.readUInt32BE(0);
    if (n > LIMITS.body) throw new DecodeError(`frame of ${n} bytes announced`);
    if (this.buf.length < 4 + n) return null;
    const body = this.buf.subarray(4, 4 + n);
    this.buf = this.buf.subarray(4 + n);
    const message = decode(body);
    if (message === null || typeof message !== "object" || Array.isArray(message) || Buffer.isBuffer(message)
        || typeof message.type !== "string") {
      throw new DecodeError("a frame that is not a map with a string type");
    }
    return message;
  }
}

// ---------------------------------------------------------------------------
// The bot.

const log = (quiet, ...parts) => {
  if (!quiet) process.stderr.write(`minimal_bot: ${parts.join(" ")}\n`);
};

// Rebuilds a protocol-2 delta snapshot on the full one it is based on.
function applyDelta(previous, delta) {
  const full = { ...previous };
  for (const [key, value] of Object.entries(delta)) {
    if (key !== "base" && key !== "view") full[key] = value;
  }
  if (delta.view !== undefined) full.view = { ...previous.view, ...delta.view };
  delete full.base;
  return full;
}

// Seconds a resumed session waits for the snapshot of a match it sat in.
const RESUME_SNAPSHOT_WAIT = 5;

// Codes after which the same request may work a little later.
const RETRY_LATER = new Set(["server_full", "too_many_active", "too_many_waiting", "creating_too_fast",
                             "rate_limited", "internal_error", "unavailable", "match_moved"]);
// Codes that mean this bot's request or configuration is wrong: retrying cannot help.
const HOPELESS = new Set(["no_such_game", "bad_option", "bad_message", "unknown_type", "not_registered",
                          "not_supported"]);

// Server message type -> the Bot method that handles it.
const HANDLERS = new Map([["welcome", "onWelcome"], ["ok", "onOk"], ["error", "onError"],
                          ["snapshot", "onSnapshot"], ["bye", "onBye"]]);

class Bot {
  constructor(options) {
    this.host = options.host;
    this.port = options.port;
    this.game = options.game;
    this.matchesWanted = options.matches;
    this.vsBot = options.vsBot;
    this.gameOptions = options.gameOptions;
    this.name = options.name;
    this.protocols = options.protocols;
    this.quiet = options.quiet;
    this.think = options.think;
    this.token = null;        // the resume token, once welcomed
    this.limits = {};
    this.nextId = 1;
    this.pending = new Map(); // request id -> {kind, match?, seq?} on this connection
    this.matches = new Map(); // match id -> {snapshot, inFlight, floor, mine}
    this.reported = new Set(); // matches whose result is printed
    this.played = 0;
    this.seeking = false;     // a queue/create is asked for or answered, no match yet
    this.requeued = false;    // queued again after a resume: a match paired at the drop may still show up
    this.connections = 0;     // welcomes so far
    this.seekRetries = 0;     // queue/create refusals in a row
    this.createLost = false;  // a create was in flight when the connection dropped
    this.socket = null;
    this.attempt = 0;         // reconnections in a row without a welcome
    this.timers = new Set();
    this.exitCode = null;
  }

  start() {
    this.connect();
  }

  later(seconds, fn) {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, seconds * 1000);
    this.timers.add(timer);
    return timer;
  }

  finish(code) {
    if (this.exitCode !== null) return;
    this.exitCode = code;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    clearInterval(this.heartbeat);
    if (this.socket) this.socket.destroy();
    process.exitCode = code;
  }

  // --- the connection ------------------------------------------------------

  connect() {
    if (this.exitCode !== null) return;
    const socket = net.connect({ host: this.host, port: this.port });
    const reader = new FrameReader();
    this.socket = socket;
    this.welcomed = false;
    this.lastHeard = Date.now();
    socket.setNoDelay(true);
    socket.on("connect", () => {
      socket.connectedOnce = true;
      const hello = { type: "hello", protocol: this.protocols, name: this.name, client: "minimal_bot.js/1" };
      if (this.token) hello.resume = this.token;
      this.send(hello);
    });
    socket.on("data", (data) => {
      if (socket !== this.socket) return;
      this.lastHeard = Date.now();
      reader.push(data);
      try {
        for (let message = reader.next(); message !== null; message = reader.next()) {
          this.receive(message);
          if (socket !== this.socket || this.exitCode !== null) return;
        }
      } catch (err) {
        if (!(err instanceof DecodeError)) throw err;
        log(this.quiet, `undecodable frame from the server (${err.message}); reconnecting`);
        this.drop("bad frame");
      }
    });
    socket.on("error", (err) => log(this.quiet, `connection error: ${err.message}`));
    socket.on("close", () => {
      if (socket === this.socket) this.drop(socket.connectedOnce ? "closed by the server" : "could not connect");
    });
  }

  send(message) {
    if (this.socket && !this.socket.destroyed) this.socket.write(frame(message));
  }

  request(message, note) {
    const id = this.nextId++;
    this.pending.set(id, note);
    this.send({ ...message, id });
    return id;
  }

  // The connection is gone (or we gave it up): resume after a backoff.
  drop(why) {
    if (this.exitCode !== null) return;
    const socket = this.socket;
    this.socket = null;
    if (socket) socket.destroy();
    clearInterval(this.heartbeat);
    // Requests in flight may or may not have run, and their answers are lost: the
    // resumed snapshots say where things stand, so every intent in flight is forgotten.
    this.createLost = [...this.pending.values()].some((note) => note.kind === "create");
    this.pending.clear();
    for (const state of this.matches.values()) {
      state.inFlight = null;
      state.floor = 0;
    }
    // 0.25 s, 0.5 s, 1 s, ... capped at 10 s, each times a random factor in [0.5, 1].
    const delay = Math.min(10, 0.25 * 2 ** this.attempt) * (0.5 + Math.random() / 2);
    this.attempt += 1;
    log(this.quiet, `connection lost (${why}); reconnecting in ${delay.toFixed(2)} s`);
    this.later(delay, () => this.connect());
  }

  startHeartbeat() {
    const interval = Number(this.limits.ping_interval) || 15;
    const timeout = Number(this.limits.ping_timeout) || 15;
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastHeard > (interval + timeout) * 1000) {
        this.drop("the server went silent");
        return;
      }
      this.send({ type: "ping", id: this.nextId++ });
    }, interval * 1000);
    this.heartbeat.unref();
  }

  // --- what arrives ----------------------------------------------------------

  receive(message) {
    if (message.type === "ping") {
      this.send({ type: "pong", id: message.id });
      return;
    }
    // pong, presence, chat and types unknown to this bot (room for later versions) are ignored.
    const handler = HANDLERS.get(message.type);
    if (handler) this[handler](message);
  }

  onWelcome(message) {
    this.welcomed = true;
    this.attempt = 0;
    this.token = message.token;
    this.limits = message.limits || {};
    log(this.quiet, `${message.resumed ? "resumed" : "welcomed as"} session ${message.session}`
        + ` (protocol ${message.protocol}, name ${message.name})`);
    this.startHeartbeat();
    this.connections += 1;
    if (!message.resumed) {
      // A new session (the first, or after bad_token) sits in nothing and waits in no queue.
      this.matches.clear();
      this.seeking = false;
      this.seekIfIdle();
      return;
    }
    // A resumed session gets a fresh snapshot of each match it sits in, soon after the
    // welcome (not necessarily before the replies to requests sent after the hello).
    // A queue place does not survive a dropped connection: with no match running,
    // queue again. A match whose snapshot does not come back is gone.
    const connection = this.connections;
    const running = [...this.matches.values()].filter((s) => s.snapshot.status !== "finished");
    if (!running.length) {
      // A create whose answer was lost may have made a match: give its snapshot time.
      this.requeued = !this.vsBot;
      this.later(this.createLost ? RESUME_SNAPSHOT_WAIT : 0, () => this.seekIfIdle(true));
      return;
    }
    this.later(RESUME_SNAPSHOT_WAIT, () => {
      if (this.connections !== connection) return;
      for (const state of running) {
        if (state.heardOn !== connection && this.matches.get(state.snapshot.match) === state) {
          log(this.quiet, `match ${state.snapshot.match} was not re-sent after the resume; giving it up`);
          this.matches.delete(state.snapshot.match);
        }
      }
      this.seekIfIdle();
    });
  }

  // Ask for the next match unless one is running or asked for.
  seekIfIdle(again = false) {
    if (this.exitCode !== null || !this.welcomed) return;
    const running = [...this.matches.values()].some((s) => s.snapshot.status !== "finished");
    if (running) return; // one at a time; an extra one (made as a connection dropped) is played out too
    if (this.played >= this.matchesWanted) {
      this.finish(0);
      return;
    }
    if (this.seeking && !again) return;
    this.seeking = true;
    if (this.vsBot) {
      this.request({ type: "create", game: this.game, bot: this.vsBot, options: this.gameOptions },
                   { kind: "create" });
    } else {
      this.request({ type: "queue", game: this.game, options: this.gameOptions }, { kind: "queue" });
    }
  }

  onOk(message) {
    const note = this.pending.get(message.id);
    this.pending.delete(message.id);
    if (note && note.kind === "intent") {
      const state = this.matches.get(note.match);
      if (state) {
        if (state.inFlight === message.id) state.inFlight = null;
        state.mine += 1;
        // Act only on a snapshot that shows this move.
        if (typeof message.seq === "number") state.floor = Math.max(state.floor, message.seq);
        this.act(note.match);
      }
    } else if (note && note.kind === "queue") {
      this.seekRetries = 0;
      log(this.quiet, `queued for ${this.game}`);
    } else if (note && note.kind === "create") {
      this.seekRetries = 0;
      log(this.quiet, `created match ${message.match} against ${this.vsBot}, seat ${message.seat}`);
    }
  }

  onError(message) {
    const note = message.id !== undefined ? this.pending.get(message.id) : undefined;
    if (message.id !== undefined) this.pending.delete(message.id);
    const code = message.code;
    const what = `${code}: ${message.message}${message.field ? ` (field ${message.field})` : ""}`;
    if (!this.welcomed) {
      // Every handshake error closes the connection.
      if (code === "bad_token") {
        log(this.quiet, "the session is gone (bad_token); starting a new one");
        this.token = null;
        this.matches.clear(); // its seats are lost with it
        this.seeking = false;
        this.attempt = 0;
        this.drop(code);
      } else if (["too_many_handshakes", "too_many_connections", "rate_limited", "server_shutdown",
                  "handshake_timeout", "unavailable"].includes(code)) {
        this.drop(code);
      } else {
        log(this.quiet, `refused: ${what}`);
        this.finish(1);
      }
      return;
    }
    if (code === "bad_frame" || code === "frame_too_large") {
      log(this.quiet, `the server could not read us: ${what}`);
      this.finish(1);
      return;
    }
    if (code === "match_expired") {
      // Our waiting match was never joined: look for another.
      this.matches.delete(message.match);
      this.seeking = false;
      this.seekIfIdle();
      return;
    }
    if (!note) {
      log(this.quiet, `error ${what}`);
      return;
    }
    if (note.kind === "intent") {
      this.onIntentError(note, message);
      return;
    }
    // queue / create
    if (code === "already_seated" && note.kind === "queue") return; // still queued
    if (RETRY_LATER.has(code)) {
      // A refusal of pace says when to come back (retry_after); the others do not:
      // 1 s, 2 s, 4 s, ... up to 16 s.
      const backoff = Math.min(16, 2 ** this.seekRetries);
      const delay = typeof message.retry_after === "number" ? Math.max(message.retry_after, 0.05)
        : backoff;
      this.seekRetries += 1;
      log(this.quiet, `${note.kind} refused for now (${what}); trying again in ${delay} s`);
      this.later(delay, () => this.seekIfIdle(true));
      return;
    }
    log(this.quiet, `${note.kind} refused: ${what}`);
    this.finish(1);
  }

  onIntentError(note, message) {
    const state = this.matches.get(note.match);
    if (!state) return;
    if (state.inFlight === message.id) state.inFlight = null;
    const code = message.code;
    switch (code) {
      case "stale":
      case "not_your_turn":
        state.stale += 1;
        // The snapshot that made our seq old arrived before this error: act on the
        // newest one held if it is newer than the seq we sent, else wait for one.
        break;
      case "match_finished":
        return; // its finished snapshot is on its way
      case "not_in_match":
      case "not_seated":
      case "no_such_match":
        log(this.quiet, `match ${note.match} is no longer ours (${code})`);
        this.matches.delete(note.match);
        this.seekIfIdle();
        return;
      case "illegal_intent":
        // Sent verbatim from `legal`, so the position moved on: wait for a newer snapshot.
        log(this.quiet, `illegal_intent at seq ${note.seq}: ${message.message}`);
        break;
      default:
        if (RETRY_LATER.has(code)) {
          state.floor = Math.min(state.floor, note.seq);
          this.later(code === "rate_limited" ? 0.5 : 1, () => this.act(note.match));
          return;
        }
        log(this.quiet, `intent refused: ${code}: ${message.message}`);
        if (HOPELESS.has(code)) {
          this.finish(1);
          return;
        }
    }
    this.act(note.match);
  }

  onSnapshot(message) {
    let state = this.matches.get(message.match);
    let snapshot = message;
    if (message.base !== undefined) {
      if (!state || state.snapshot.seq !== message.base || state.snapshot.seat !== message.seat) {
        // A delta we cannot rebuild: reconnecting gives full snapshots.
        this.drop(`a delta on seq ${message.base} we do not hold`);
        return;
      }
      snapshot = applyDelta(state.snapshot, message);
    }
    if (snapshot.seat === null || snapshot.seat === undefined) {
      // Watching, not sitting (e.g. our seat went to a bot while we were away).
      if (state && state.snapshot.seat !== null && snapshot.status !== "finished") {
        log(this.quiet, `match ${snapshot.match}: our seat was taken over; leaving it`);
        this.request({ type: "leave", match: snapshot.match }, { kind: "leave" });
        this.matches.delete(snapshot.match);
        this.seekIfIdle();
      }
      return;
    }
    if (!state) {
      if (this.reported.has(snapshot.match)) return; // an old match, re-sent after a resume
      state = { snapshot, inFlight: null, floor: 0, mine: 0, stale: 0 };
      this.matches.set(snapshot.match, state);
      this.seeking = false;
      if (this.requeued && snapshot.status !== "finished") {
        // Paired as the connection dropped, and queued again since: leave the queue.
        this.requeued = false;
        this.request({ type: "unqueue", game: this.game }, { kind: "unqueue" });
      }
      if (snapshot.status !== "finished") {
        log(this.quiet, `paired: match ${snapshot.match} (${snapshot.game}), seat ${snapshot.seat}`);
      }
    } else if (snapshot.seq < state.snapshot.seq) {
      return; // keep the newest
    }
    state.snapshot = snapshot;
    state.heardOn = this.connections;
    if (snapshot.status === "finished") {
      this.report(state);
      return;
    }
    this.act(snapshot.match);
  }

  // The seq rule: one intent in flight per match, on the newest snapshot, and only
  // once that snapshot shows our last accepted move.
  act(matchId) {
    const state = this.matches.get(matchId);
    if (!state || this.exitCode !== null || !this.welcomed) return;
    const snap = state.snapshot;
    if (snap.status !== "active" || !snap.legal.length || state.inFlight !== null || snap.seq < state.floor
        || state.thinking) return;
    if (this.think > 0 && !state.thought) {
      // Think, then act on whatever snapshot is the newest by then.
      state.thinking = true;
      this.later(this.think, () => {
        state.thinking = false;
        state.thought = true;
        this.act(matchId);
        state.thought = false;
      });
      return;
    }
    const id = this.request({ type: "intent", match: matchId, seq: snap.seq, intent: snap.legal[0] },
                            { kind: "intent", match: matchId, seq: snap.seq });
    state.inFlight = id;
    state.floor = snap.seq + 1;
  }

  report(state) {
    const snap = state.snapshot;
    this.matches.delete(snap.match);
    if (this.reported.has(snap.match)) return;
    this.reported.add(snap.match);
    this.played += 1;
    const result = snap.result || {};
    const winner = result.winner === null || result.winner === undefined ? "none" : String(result.winner);
    const outcome = winner === "none" ? "draw" : Number(winner) === snap.seat ? "win" : "loss";
    process.stdout.write(`finished match=${snap.match} game=${snap.game} seat=${snap.seat} winner=${winner}`
                         + ` outcome=${outcome} reason=${result.reason} moves=${snap.seq} mine=${state.mine}`
                         + ` stale=${state.stale}\n`);
    this.seekIfIdle();
  }

  onBye(message) {
    const reason = message.reason;
    if (reason === "session_resumed" || reason === "logged_out") {
      log(this.quiet, `bye ${reason}: stopping`);
      this.finish(1);
      return;
    }
    this.drop(`bye ${reason}`);
  }
}

// ---------------------------------------------------------------------------
// The command line.

function parseValue(text) {
  if (text === "true") return true;
  if (text === "false") return false;
  if (/^-?\d+$/.test(text)) return Number(text);
  return text;
}

function usage(message) {
  process.stderr.write(`minimal_bot: ${message}\nusage: node minimal_bot.js HOST:PORT [war|datastructures]`
                       + " [--matches N] [--vs-bot NAME] [--option NAME=VALUE] [--name NAME] [--protocol 1|2]"
                       + " [--think SECONDS] [--quiet]\n");
  process.exit(2);
}

function parseArgs(argv) {
  const options = { game: "datastructures", matches: 1, vsBot: null, gameOptions: {},
                    name: `jsbot-${process.pid}`, protocols: [1, 2], quiet: false,
                    think: 0 };
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === "--matches") {
      options.matches = Number(value());
      if (!Number.isInteger(options.matches) || options.matches < 1) usage("--matches must be a positive integer");
    } else if (arg === "--vs-bot") options.vsBot = value();
    else if (arg === "--name") options.name = value();
    else if (arg === "--option") {
      const [key, ...rest] = value().split("=");
      if (!rest.length) usage("--option takes NAME=VALUE");
      options.gameOptions[key] = parseValue(rest.join("="));
    } else if (arg === "--protocol") {
      const version = Number(value());
      options.protocols = version === 1 ? [1] : version === 2 ? [1, 2] : usage("--protocol is 1 or 2");
    } else if (arg === "--think") {
      options.think = Number(value());
      if (!(options.think >= 0)) usage("--think takes a number of seconds");
    } else if (arg === "--quiet") options.quiet = true;
    else if (arg.startsWith("--")) usage(`unknown option ${arg}`);
    else positional.push(arg);
  }
  if (positional.length < 1 || positional.length > 2) usage("HOST:PORT is required");
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(positional[0]);
  if (!match) usage(`bad address ${positional[0]}`);
  options.host = match[1] || match[2];
  options.port = Number(match[3]);
  if (positional[1]) options.game = positional[1];
  if (!["war", "datastructures"].includes(options.game)) usage(`unknown game ${options.game}`);
  return options;
}

// The two byte dumps of docs/protocol.md ("The hello frame, byte by byte").
function selftest() {
  const hex = (b) => b.toString("hex");
  const hello = frame({ type: "hello", protocol: [1], name: "alice", client: "mybot/0.1" });
  const helloDump = "00000033" + "84" + "a474797065" + "a568656c6c6f" + "a870726f746f636f6c" + "9101"
    + "a46e616d65" + "a5616c696365" + "a6636c69656e74" + "a96d79626f742f302e31";
  const intent = frame({ type: "intent", id: 8, match: "m1a2b3c4d5", seq: 17, intent: { type: "flip" } });
  const intentDump = "0000003985a474797065a6696e74656e74a2696408a56d61746368aa6d3161326233633464"
    + "35a373657111a6696e74656e7481a474797065a4666c6970";
  const failures = [];
  if (hex(hello) !== helloDump) failures.push(`hello: ${hex(hello)}`);
  if (hex(intent) !== intentDump) failures.push(`intent: ${hex(intent)}`);
  const sample = { type: "x", n: [0, 127, 128, 65535, 65536, 2 ** 32, 2 ** 53 - 1, -1, -33, -129, -(2 ** 40)],
                   f: 0.5, s: "é".repeat(40), nil: null, b: [true, false], deep: { a: { b: [1, { c: "d" }] } } };
  if (JSON.stringify(decode(encode(sample))) !== JSON.stringify(sample)) failures.push("round trip");
  for (const [bad, why] of [["c1", "never used"], ["d40100", "ext"], ["0100", "trailing"], ["92", "truncated"]]) {
    try {
      decode(Buffer.from(bad, "hex"));
      failures.push(`${bad} (${why}) decoded`);
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
    }
  }
  if (failures.length) {
    process.stdout.write(`selftest FAILED: ${failures.join("; ")}\n`);
    process.exit(1);
  }
  process.stdout.write("selftest ok\n");
}

if (require.main === module) {
  if (process.argv[2] === "--selftest") selftest();
  else new Bot(parseArgs(process.argv.slice(2))).start();
}

module.exports = { encode, decode, frame, FrameReader, DecodeError, applyDelta };
