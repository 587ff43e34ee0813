//! Kingmaker's gRPC protocol.
