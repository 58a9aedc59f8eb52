"""Sans-IO wire format: framing, msgpack codec, message schemas, errors, versions."""
