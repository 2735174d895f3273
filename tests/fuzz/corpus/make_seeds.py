#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/ (one folder per target), each input
in its target's format (the comment at the top of tests/fuzz/<target>_fuzz.cc).
Run from anywhere: python3 tests/fuzz/corpus/make_seeds.py. The seeds are
checked in; rerun only to change them. Packet layout from couchbase/kv_engine
docs/BinaryProtocol.md."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

GET, SET, ADD, DELETE, INCREMENT, QUIT, FLUSH, GETQ, NOOP = 0x00, 0x01, 0x02, 0x04, 0x05, 0x07, 0x08, 0x09, 0x0a
APPEND, STAT, SETQ, TOUCH, HELLO = 0x0e, 0x10, 0x11, 0x1c, 0x1f
SASL_LIST, SASL_AUTH, SASL_STEP, SET_VBUCKET = 0x20, 0x21, 0x22, 0x3d
DCP_OPEN, SEQNO_ACK, SET_PARAM, SELECT_BUCKET = 0x50, 0x61, 0x82, 0x89
GET_META, GET_CLUSTER_CONFIG, GET_ERROR_MAP = 0xa0, 0xb5, 0xfe
SUBDOC_GET, SUBDOC_DICT_UPSERT, SUBDOC_COUNTER = 0xc5, 0xc8, 0xcf
SUBDOC_MULTI_LOOKUP, SUBDOC_MULTI_MUTATION = 0xd0, 0xd1


def lookup_spec(opcode, path, flags=0):
    return struct.pack(">BBH", opcode, flags, len(path)) + path


def mutation_spec(opcode, path, value, flags=0):
    return struct.pack(">BBHI", opcode, flags, len(path), len(value)) + path + value


def req(opcode, key=b"", extras=b"", value=b"", opaque=0, vbucket=0, cas=0, frames=b"",
        datatype=0):
    body = frames + extras + key + value
    if frames:
        head = struct.pack(">BBBBBBH", 0x08, opcode, len(frames), len(key), len(extras),
                           datatype, vbucket)
    else:
        head = struct.pack(">BBHBBH", 0x80, opcode, len(key), len(extras), datatype, vbucket)
    return head + struct.pack(">IIQ", len(body), opaque, cas) + body


def res(opcode, status=0, key=b"", value=b"", opaque=0):
    body = key + value
    return struct.pack(">BBHBBHIIQ", 0x81, opcode, len(key), 0, 0, status, len(body), opaque,
                       0) + body


def durability(level, timeout_ms=None):
    data = bytes([level]) + (struct.pack(">H", timeout_ms) if timeout_ms is not None else b"")
    return bytes([0x10 | len(data)]) + data


def store(opcode, key, value, opaque, frames=b"", vbucket=0):
    return req(opcode, key, struct.pack(">II", 0, 0), value, opaque, vbucket, frames=frames)


def write(target, name, data):
    folder = os.path.join(HERE, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def packet_reader():
    # byte 0: direction (bit 0) and max_packet_size / 64 (the rest); byte 1: piece count.
    pipeline = req(GET, b"k", opaque=1) + store(SET, b"k", b"v", 2) + req(NOOP, opaque=3)
    write("packet_reader", "pipeline_bytewise", bytes([0x20, 1, 1]) + pipeline)
    write("packet_reader", "pipeline_mixed", bytes([0x20, 3, 5, 0x83, 24]) + pipeline)
    write("packet_reader", "too_big", bytes([0x02, 1, 7]) + store(SET, b"k", b"v" * 200, 1))
    write("packet_reader", "bad_magic_after_one", bytes([0x20, 0]) + req(NOOP) + b"\x42junk")
    write("packet_reader", "responses", bytes([0x21, 1, 30]) + res(GET, 1) + res(NOOP, 0))
    write("packet_reader", "partial_tail", bytes([0x20, 1, 9]) + pipeline[:-5])


def request():
    write("request", "get", req(GET, b"key", opaque=7))
    write("request", "set_majority_timeout",
          store(SET, b"k", b"value", 1, frames=durability(1, 1500)))
    write("request", "delete_persist", req(DELETE, b"k", opaque=2, frames=durability(3)))
    write("request", "reorder_and_tracing",
          store(SET, b"k", b"v", 3, frames=b"\x00" + b"\x32ab" + durability(2)))
    write("request", "hello", req(HELLO, b"agent", value=struct.pack(">HHH", 0x0b, 0x07, 0x0e)))
    write("request", "set_param",
          req(SET_PARAM, b"durability_timeout_mode", struct.pack(">I", 6), b"polling"))
    write("request", "escaped_frame_id", store(SET, b"k", b"v", 4, frames=b"\xf1\x00\x00"))
    write("request", "increment",
          req(INCREMENT, b"n", struct.pack(">QQI", 1, 10, 0), opaque=5,
              frames=durability(1, 100)))

    write("request", "subdoc_multi_mutation_durable",
          req(SUBDOC_MULTI_MUTATION, b"doc", struct.pack(">IB", 60, 0x01), opaque=6,
              value=mutation_spec(SUBDOC_DICT_UPSERT, b"_t.cas", b'"${Mutation.CAS}"', 0x15)
              + mutation_spec(SUBDOC_COUNTER, b"n", b"1"),
              frames=durability(1, 100)))
    write("request", "subdoc_get", req(SUBDOC_GET, b"doc", struct.pack(">HB", 3, 0), b"a.b",
                                       opaque=7))


def dispatcher():
    # byte 0 bit 0: the server has a user ("fuzz"/"fuzz"); then the stream.
    hello = req(HELLO, b"fuzz", value=struct.pack(">HHHH", 0x0b, 0x07, 0x04, 0x0e), opaque=1)
    writes = (store(SET, b"a", b"1", 2, frames=durability(1, 50))
              + store(ADD, b"b", b"2", 3, frames=durability(2))
              + req(DELETE, b"a", opaque=4, frames=durability(3))
              + store(SETQ, b"c", b"3", 5) + req(GETQ, b"missing", opaque=6)
              + req(GET, b"c", opaque=7) + req(NOOP, opaque=8))
    write("dispatcher", "open_durable_writes", b"\x00" + hello + writes)
    write("dispatcher", "dcp_ack",
          b"\x00" + store(SET, b"a", b"1", 1, frames=durability(1))
          + req(DCP_OPEN, b"replica1", struct.pack(">II", 0, 1), opaque=2)
          + req(SEQNO_ACK, extras=struct.pack(">Q", 1), opaque=3, vbucket=0)
          + req(GET, b"a", opaque=4))
    write("dispatcher", "admin",
          b"\x00" + req(STAT, opaque=1) + req(STAT, b"durability", opaque=2)
          + req(SET_PARAM, b"durability_timeout_mode", struct.pack(">I", 6), b"polling", 3)
          + req(SET_PARAM, b"durability_timeout_task_interval", struct.pack(">I", 6), b"\xff", 4)
          + req(SET_VBUCKET, extras=b"\x02", opaque=5, vbucket=1)
          + store(SET, b"k", b"v", 6, vbucket=1, frames=durability(1))
          + req(FLUSH, opaque=7) + req(GET_CLUSTER_CONFIG, opaque=8)
          + req(GET_ERROR_MAP, value=b"\x00\x02", opaque=9) + req(QUIT, opaque=10)
          + req(NOOP, opaque=11))
    write("dispatcher", "sasl_plain_then_data",
          b"\x01" + req(GET, b"a", opaque=1) + req(SASL_LIST, opaque=2)
          + req(SASL_AUTH, b"PLAIN", value=b"\x00fuzz\x00fuzz", opaque=3)
          + req(SELECT_BUCKET, b"default", opaque=4) + store(SET, b"a", b"1", 5)
          + req(APPEND, b"a", value=b"2", opaque=6) + req(TOUCH, b"a", struct.pack(">I", 9), opaque=7)
          + req(GET_META, b"a", opaque=8))
    # HELLO with XATTR (0x06), then sub-document writes and reads of one document.
    write("dispatcher", "subdoc",
          b"\x00" + req(HELLO, b"fuzz", value=struct.pack(">HHH", 0x06, 0x07, 0x0b), opaque=1)
          + store(SET, b"d", b'{"a":[1]}', 2)
          + req(SUBDOC_MULTI_MUTATION, b"d", b"\x01", opaque=3,
                value=mutation_spec(SUBDOC_DICT_UPSERT, b"x.y", b"1", 0x05)
                + mutation_spec(SUBDOC_COUNTER, b"n", b"2", 0x01), frames=durability(1, 50))
          + req(SUBDOC_MULTI_LOOKUP, b"d", opaque=4,
                value=lookup_spec(SUBDOC_GET, b"x", 0x04) + lookup_spec(SUBDOC_GET, b"a[-1]")
                + lookup_spec(GET, b""))
          + req(SUBDOC_GET, b"d", struct.pack(">HB", 4, 0), b"a[0]", opaque=5)
          + req(GET, b"d", opaque=6))
    write("dispatcher", "scram_first", b"\x01" + req(SASL_AUTH, b"SCRAM-SHA256",
                                                     value=b"n,,n=fuzz,r=abcdef", opaque=1)
          + req(SASL_STEP, b"SCRAM-SHA256", value=b"c=biws,r=abcdef,p=AAAA", opaque=2))
    write("dispatcher", "refused_then_too_big",
          b"\x00" + req(0xee, opaque=1) + store(SET, b"k", b"v", 2, frames=durability(9))
          + struct.pack(">BBHBBHIIQ", 0x80, SET, 1, 8, 0, 0, 1 << 20, 3, 0))


def sasl():
    # byte 0: mechanism (0 SHA512, 1 SHA256, 2 SHA1, 3 PLAIN, 4 name); byte 1 bit 0:
    # computed client-final; byte 2: length of the first message.
    def seed(mech, computed, first, second=b""):
        return bytes([mech, computed, len(first)]) + first + second
    write("sasl", "plain_ok", seed(3, 0, b"\x00user\x00pencil"))
    write("sasl", "plain_wrong", seed(3, 0, b"admin\x00user\x00pencil2"))
    write("sasl", "scram256_correct", seed(1, 1, b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO", b"pencil"))
    write("sasl", "scram1_unknown_user", seed(2, 1, b"y,a=x,n=us=3Der,r=nonce", b"pencil"))
    write("sasl", "scram512_raw_final",
          seed(0, 0, b"n,,n=user,r=abc", b"c=biws,r=abc,p=" + b"A" * 88))
    write("sasl", "mechanism_name", seed(4, 0, b"SCRAM-SHA256"))


def config():
    # byte 0: bit 0 bucket scope, bit 1 setFromText ("key NUL value").
    write("config", "bucket_doc", b"\x01" + b'{"durability_timeout_mode": "polling", '
          b'"max_vbuckets": 64, "flush_enabled": true, "durability_min_level": "majority"}')
    write("config", "server_doc", b'\x00{"num_nonio_threads": 2, "node_name": "n1"}')
    write("config", "set_interval", b"\x03durability_timeout_task_interval\x0010")
    write("config", "set_paused", b"\x03simulated_replicas_paused\x00replica1")
    write("config", "overflow", b'\x01{"max_size": 1e999}')


def server_config():
    write("server_config", "readme_example",
          b'{"node_name": "active", "users": {"Administrator": {"password": "password"}},'
          b' "buckets": {"default": {"durability_timeout_mode": "polling",'
          b' "replicas": ["replica1", "replica2"],'
          b' "simulated_replicas": {"replica1": {"ack_delay_ms": 1}}}}}')
    write("server_config", "null_slot_two_buckets",
          b'{"default_bucket": "b", "buckets": {"a": {"replicas": ["r1", null]},'
          b' "b": {"max_vbuckets": 8, "replicas": ["r1"],'
          b' "simulated_replicas": {"r1": {"ack_delay_ms": 0, "ack_jitter_ms": 5}}}}}')
    write("server_config", "minimal", b'{"buckets": {"x": {}}}')


def topology():
    write("topology", "one_chain", b'[["active", "replica1", null]]')
    write("topology", "two_chains", b'[["a", "b"], ["a", null, "c", "d"]]')
    write("topology", "impossible", b'[["a", null, null]]')


if __name__ == "__main__":
    packet_reader()
    request()
    dispatcher()
    sasl()
    config()
    server_config()
    topology()
