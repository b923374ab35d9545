// read.js FILE: reads a tcs recording with Foxglove's own libraries —
// @mcap/core's McapIndexedReader (CRCs validated) and
// @foxglove/rosmsg2-serialization's MessageReader on every message, its
// schema parsed by @foxglove/rosmsg (ros2msg) — and prints a JSON report:
// header, per-channel topic, schema, encodings, count, first and last log
// time (ns, as strings), the attachments and metadata. Any failure exits 1
// with the reason on stderr. test/record_test.go runs it.
"use strict";

const fs = require("fs/promises");
const { McapIndexedReader } = require("@mcap/core");
const { parse } = require("@foxglove/rosmsg");
const { MessageReader } = require("@foxglove/rosmsg2-serialization");

async function main() {
  const path = process.argv[2];
  if (!path) throw new Error("usage: node read.js FILE.mcap");
  const fh = await fs.open(path, "r");
  const size = (await fh.stat()).size;
  const readable = {
    size: async () => BigInt(size),
    read: async (offset, length) => {
      const buf = new Uint8Array(Number(length));
      const { bytesRead } = await fh.read(buf, 0, Number(length), Number(offset));
      if (bytesRead !== Number(length)) throw new Error(`short read at ${offset}`);
      return buf;
    },
  };
  const reader = await McapIndexedReader.Initialize({ readable });
  const readers = new Map();
  for (const [id, schema] of reader.schemasById) {
    if (schema.encoding !== "ros2msg") throw new Error(`schema ${schema.name}: encoding ${schema.encoding}`);
    const defs = parse(new TextDecoder().decode(schema.data), { ros2: true });
    readers.set(id, new MessageReader(defs));
  }
  const channels = {};
  for (const [id, ch] of reader.channelsById) {
    const schema = reader.schemasById.get(ch.schemaId);
    channels[id] = {
      topic: ch.topic, schema: schema ? schema.name : "", message_encoding: ch.messageEncoding,
      count: 0, first_log_ns: null, last_log_ns: null, trailing: 0, first: null, last: null,
    };
  }
  let total = 0;
  let prev = -1n;
  let ordered = true;
  for await (const m of reader.readMessages({ validateCrcs: true })) {
    const ch = reader.channelsById.get(m.channelId);
    const out = channels[m.channelId];
    if (ch.messageEncoding !== "cdr") throw new Error(`${ch.topic}: message encoding ${ch.messageEncoding}`);
    const mr = readers.get(ch.schemaId);
    let value;
    try {
      value = mr.readMessage(m.data);
    } catch (e) {
      throw new Error(`${ch.topic} message ${out.count} (log ${m.logTime}): ${e.message}`);
    }
    if (mr.lastReadHadTrailingBytes()) out.trailing++;
    if (out.count === 0) {
      out.first_log_ns = m.logTime.toString();
      out.first = value;
    }
    out.last_log_ns = m.logTime.toString();
    out.last = value;
    out.count++;
    total++;
    if (m.logTime < prev) ordered = false;
    prev = m.logTime;
  }
  const attachments = [];
  for await (const a of reader.readAttachments({ validateCrcs: true })) {
    attachments.push({ name: a.name, media_type: a.mediaType, size: a.data.length, text: new TextDecoder().decode(a.data) });
  }
  const metadata = [];
  for await (const md of reader.readMetadata()) {
    metadata.push({ name: md.name, metadata: Object.fromEntries(md.metadata) });
  }
  await fh.close();
  const stats = reader.statistics;
  const report = {
    profile: reader.header.profile,
    library: reader.header.library,
    chunks: reader.chunkIndexes.length,
    messages: total,
    statistics_messages: stats ? stats.messageCount.toString() : null,
    ordered,
    channels: Object.values(channels),
    attachments,
    metadata,
  };
  process.stdout.write(JSON.stringify(report, (k, v) => (typeof v === "bigint" ? v.toString() : v), 1) + "\n");
}

main().catch((e) => {
  process.stderr.write(`read.js: ${e.stack || e}\n`);
  process.exit(1);
});
