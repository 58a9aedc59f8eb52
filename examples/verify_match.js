#!/usr/bin/env node
// Verify cardserver matches in JavaScript, written from docs/protocol.md
// ("The random stream") alone: no code of the project is used.
//
//   node verify_match.js vectors rng_vectors.json   check the published test vectors
//   node verify_match.js record match.json          verify a finished match's public
//   cardserver replay ID --json | node verify_match.js record -     record (+ reveal)
//
// Exit status: 0 verified, 1 a check failed, 2 the input cannot be verified
// (not finished, an unknown stream, unreadable).
"use strict";

const crypto = require("crypto");
const fs = require("fs");

const LABEL = "cardserver/stream/1";
const STREAM = "hmac-sha256-ctr/1";
const SUITS = "CDHS";
const RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];

class VerifyError extends Error {}
class CannotVerify extends Error {}

function check(condition, message) {
  if (!condition) throw new VerifyError(message);
}

function hmac(key, data) {
  return crypto.createHmac("sha256", key).update(data).digest();
}

// The stream: key from the seeds, blocks HMAC(key, uint64_be(i)), 32-bit words.
class Stream {
  constructor(serverSeedHex, clientSeeds) {
    const parts = [Buffer.from(LABEL, "ascii")];
    for (const seed of clientSeeds) {
      parts.push(Buffer.from([0]), Buffer.from(seed.toLowerCase(), "ascii"));
    }
    this.key = hmac(Buffer.from(serverSeedHex, "hex"), Buffer.concat(parts));
    this.counter = 0n;
    this.words = [];
    this.draws = 0;
  }

  block(index) {
    const counter = Buffer.alloc(8);
    counter.writeBigUInt64BE(BigInt(index));
    return hmac(this.key, counter);
  }

  word() {
    if (this.words.length === 0) {
      const block = this.block(this.counter);
      this.counter += 1n;
      for (let i = 0; i < 32; i += 4) this.words.push(block.readUInt32BE(i));
    }
    this.draws += 1;
    return this.words.shift();
  }

  randbelow(n) {
    if (n === 1) return 0;
    const k = (n - 1).toString(2).length;
    for (;;) {
      const value = k === 32 ? this.word() : Math.floor(this.word() / 2 ** (32 - k));
      if (value < n) return value;
    }
  }

  shuffle(items) {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}

const face = (id) => RANKS[Math.floor((id % 52) / 4)] + SUITS[id % 4];
const faces = (ids) => ids.map(face);
const rankOf = (id) => Math.floor((id % 52) / 4) + 2;
const range = (n) => Array.from({ length: n }, (_, i) => i);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function checkVectors(file) {
  const doc = JSON.parse(fs.readFileSync(file, "utf8"));
  check(doc.stream === STREAM, `vectors are for ${doc.stream}, not ${STREAM}`);
  for (const v of doc.vectors) {
    const name = `vector ${v.server_seed.slice(-4)}`;
    const s = new Stream(v.server_seed, v.client_seeds);
    check(s.key.toString("hex") === v.key, `${name}: key`);
    check(s.block(0).toString("hex") === v.block0, `${name}: block 0`);
    check(s.block(1).toString("hex") === v.block1, `${name}: block 1`);
    check(same(v.words.map(() => s.word()), v.words), `${name}: words`);
    const r = new Stream(v.server_seed, v.client_seeds);
    check(same(v.randbelow_52.map(() => r.randbelow(52)), v.randbelow_52), `${name}: randbelow`);
    const d52 = new Stream(v.server_seed, v.client_seeds).shuffle(range(52));
    check(same(faces(d52), v.shuffle_52), `${name}: shuffle of 52`);
    const d104 = new Stream(v.server_seed, v.client_seeds).shuffle(range(104));
    check(same(d104, v.shuffle_104), `${name}: shuffle of 104`);
  }
  return [`${doc.vectors.length} vectors: keys, blocks, words, randbelow, 52- and 104-card shuffles`];
}

// ---------------------------------------------------------------- War

function verifyWar(record, stream, tally) {
  const deal = stream.shuffle(range(52));
  tally.shuffles += 1;
  const decks = [deal.filter((_, i) => i % 2 === 0), deal.filter((_, i) => i % 2 === 1)];
  const shuffled = record.options.return !== "played";
  const newStep = () => ({ down: [null, null], up: [null, null] });
  let steps = [newStep()];
  const counts = (view, where) => check(same(view.counts, [decks[0].length, decks[1].length]),
    `${where}: deck counts ${JSON.stringify(view.counts)}, the replay has ` +
    `[${decks[0].length}, ${decks[1].length}]`);
  counts(record.start, "start");
  for (const move of record.moves) {
    const at = `seq ${move.seq}`;
    for (const event of move.events) {
      if (event.type === "flip") {
        const seat = event.seat;
        const step = steps[steps.length - 1];
        if ("down" in event) {
          check(decks[seat].length > 1, `${at}: seat ${seat} has no card to place face down`);
          step.down[seat] = decks[seat].shift();
        }
        check(decks[seat].length > 0, `${at}: seat ${seat} flips with an empty deck`);
        const up = decks[seat].shift();
        check(face(up) === event.up, `${at}: seat ${seat} flipped ${event.up}, the deal says ${face(up)}`);
        step.up[seat] = up;
        tally.cards += 1;
      } else if (event.type === "war") {
        steps.push(newStep());
      } else if (event.type === "battle") {
        const latest = [0, 1].map((seat) => {
          for (let i = steps.length - 1; i >= 0; i--) if (steps[i].up[seat] !== null) return steps[i].up[seat];
          return null;
        });
        const winner = rankOf(latest[0]) > rankOf(latest[1]) ? 0 : 1;
        check(rankOf(latest[0]) !== rankOf(latest[1]) && winner === event.winner,
          `${at}: battle ${event.battle} went to seat ${event.winner}, the cards say otherwise`);
        // shuffled: table order; played: at each step the winner's card first
        const [w, l] = shuffled ? [0, 1] : [winner, 1 - winner];
        const pile = [];
        for (const step of steps) {
          for (const card of [step.down[w], step.down[l], step.up[w], step.up[l]]) {
            if (card !== null) pile.push(card);
          }
        }
        check(pile.length === event.cards, `${at}: a pile of ${event.cards}, the replay has ${pile.length}`);
        if (shuffled) {
          stream.shuffle(pile);
          tally.shuffles += 1;
        }
        decks[winner].push(...pile);
        steps = [newStep()];
      }
    }
    counts(move.view, at);
  }
}

// ------------------------------------------------------- Data Structures

function verifyDataStructures(record, stream, tally) {
  const deck = stream.shuffle(range(104));
  tally.shuffles += 1;
  const pop = () => deck.pop();
  const queue = range(5).map(pop);
  const stacks = [[pop()], [pop()]];
  const hands = [range(5).map(pop), range(5).map(pop)];
  const first = stream.randbelow(2);
  const arrays = [[[], [], []], [[], [], []]];
  let discard = [];
  let recycle = [];
  let reshuffles = 0;
  let announced = 0;

  const draw = (n, at) => {
    const out = [];
    while (out.length < n) {
      if (deck.length === 0) {
        if (discard.length === 0) break;
        deck.push(...discard);
        discard = [];
        stream.shuffle(deck);
        tally.shuffles += 1;
        reshuffles += 1;
      }
      out.push(deck.pop());
    }
    check(out.length === n, `${at}: ${n} cards drawn, the replay has only ${out.length}`);
    return out;
  };
  const take = (pile, index, shown, at, what) => {
    check(index >= 0 && index < pile.length, `${at}: ${what}: no card at index ${index}`);
    const [card] = pile.splice(index, 1);
    check(face(card) === shown, `${at}: ${what} shows ${shown}, the replay has ${face(card)}`);
    tally.cards += 1;
    return card;
  };
  const compare = (view, at) => {
    check(same(view.queue, faces(queue)), `${at}: the queue differs from the replay`);
    check(same(view.discard, faces(discard)), `${at}: the discard pile differs from the replay`);
    check(view.deck === deck.length, `${at}: deck of ${view.deck}, the replay has ${deck.length}`);
    check(view.recycle === recycle.length, `${at}: recycle count differs from the replay`);
    check(same(view.hand_counts, [hands[0].length, hands[1].length]), `${at}: hand sizes differ`);
    for (const seat of [0, 1]) {
      const player = view.players[seat];
      check(same(player.stack, faces(stacks[seat])), `${at}: seat ${seat}'s stack differs`);
      check(same(player.arrays.map((a) => a.cards), arrays[seat].map(faces)),
        `${at}: seat ${seat}'s arrays differ`);
    }
  };

  compare(record.start, "start");
  tally.cards += 12;   // queue and stacks of the deal, public in the start view
  check(record.start.to_move === first, `start: seat ${record.start.to_move} moves first, the stream says ${first}`);
  for (const move of record.moves) {
    const at = `seq ${move.seq}`;
    for (const e of move.events) {
      if (e.type === "play") {
        let card;
        if (e.src === "hand") card = take(hands[e.seat], e.index, e.card, at, "a play from the hand");
        else if (e.src === "queue") card = take(queue, 0, e.card, at, "a play from the queue");
        else card = take(stacks[e.stack], stacks[e.stack].length - 1, e.card, at, "a play from a stack");
        arrays[e.seat][e.array].push(card);
      } else if (e.type === "close") {
        recycle.push(...arrays[e.seat][e.array]);
        arrays[e.seat][e.array] = [];
      } else if (e.type === "mulligan") {
        const hand = hands[e.seat];
        check(same(faces(hand), e.hand), `${at}: the mulligan shows ${e.hand}, the replay has ${faces(hand)}`);
        tally.cards += hand.length;
        discard.push(...hand.filter((_, i) => i !== e.keep));
        hands[e.seat] = [hand[e.keep]];
      } else if (e.type === "discard") {
        discard.push(take(queue, 0, e.card, at, "the queue head discarded"));
      } else if (e.type === "stack") {
        stacks[e.seat].push(take(hands[e.seat], e.index, e.card, at, "a stack card"));
      } else if (e.type === "enqueue") {
        queue.push(take(hands[e.seat], e.index, e.card, at, "an enqueued card"));
      } else if (e.type === "recycle") {
        check(e.cards === recycle.length && e.discard === discard.length,
          `${at}: recycle of ${e.cards} + ${e.discard} cards, the replay has ${recycle.length} + ${discard.length}`);
        deck.push(...recycle, ...discard);
        recycle = [];
        discard = [];
        stream.shuffle(deck);
        tally.shuffles += 1;
        check(deck.length === e.deck, `${at}: a recycled deck of ${e.deck}, the replay has ${deck.length}`);
      } else if (e.type === "reshuffle") {
        announced += 1;
      } else if (e.type === "queue") {
        const drawn = draw(e.cards.length, at);
        check(same(faces(drawn), e.cards), `${at}: the queue got ${e.cards}, the replay draws ${faces(drawn)}`);
        tally.cards += drawn.length;
        queue.push(...drawn);
      } else if (e.type === "draw") {
        const drawn = draw(e.count, at);
        if (e.cards) check(same(faces(drawn), e.cards), `${at}: seat ${e.seat} drew ${e.cards}, the replay ${faces(drawn)}`);
        hands[e.seat].push(...drawn);
      }
    }
    check(reshuffles === announced, `${at}: ${announced} reshuffles announced, the replay made ${reshuffles}`);
    compare(move.view, at);
  }
}

// ---------------------------------------------------------------- record

function verifyRecord(record) {
  if (record.status !== "finished" || !record.reveal) throw new CannotVerify("the match is not finished: no reveal yet");
  if (record.stream !== STREAM) throw new CannotVerify(`stream ${record.stream}: only ${STREAM} is specified for other languages`);
  const { seed, salt } = record.reveal;
  check(/^[0-9a-f]{64}$/.test(seed), "the revealed seed is not 64 hex digits");
  const digest = crypto.createHash("sha256").update(Buffer.from(seed + salt, "hex")).digest("hex");
  check(digest === record.commitment.toLowerCase(), "the reveal does not match the commitment");
  check(Array.isArray(record.client_seeds) && record.client_seeds.length === 2 &&
        record.client_seeds.every((s) => /^[0-9a-f]{1,64}$/.test(s)), "client_seeds are not two hex seeds");
  const stream = new Stream(seed, record.client_seeds);
  const tally = { shuffles: 0, cards: 0 };
  if (record.game === "war") verifyWar(record, stream, tally);
  else if (record.game === "datastructures") verifyDataStructures(record, stream, tally);
  else throw new CannotVerify(`unknown game ${record.game}`);
  return [
    "the reveal matches the commitment",
    `${tally.shuffles} shuffles replayed (${stream.draws} draws from the stream)`,
    `${tally.cards} shown cards match the replay; ${record.moves.length} public views agree`,
  ];
}

function main(argv) {
  const [mode, file] = argv;
  if (!["vectors", "record"].includes(mode) || !file) {
    process.stderr.write("usage: verify_match.js vectors FILE | record FILE (- for stdin)\n");
    return 2;
  }
  try {
    const text = fs.readFileSync(file === "-" ? 0 : file, "utf8");
    const lines = mode === "vectors" ? checkVectors(file) : verifyRecord(JSON.parse(text));
    for (const line of lines) process.stdout.write(`ok: ${line}\n`);
    process.stdout.write("verified\n");
    return 0;
  } catch (err) {
    if (err instanceof VerifyError) {
      process.stdout.write(`FAILED: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`cannot verify: ${err.message}\n`);
    return 2;
  }
}

process.exitCode = main(process.argv.slice(2));
