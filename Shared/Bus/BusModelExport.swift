// The bus's values (CloudEvents, topics, service errors, trace headers) are part of its API: a
// module that uses the bus sees them without importing BusModel, which Storage uses without sockets.
@_exported import BusModel
