//! gRPC services (being written).
