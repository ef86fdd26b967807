// Package classgen generates lease histories of the whole class the checker
// must decide (docs/design.md §10): any number of operations, keys and
// processes, a fraction of unanswered operations, exact or interval mode
// with a clock uncertainty of up to many TTLs, retrying or non-retrying
// holders, seed or fenced-storage semantics, with or without fences — each
// history correct, or with one planted violation of a named property.
//
// Histories are made by running holders against the reference coordinator
// (internal/impl/memstore), so a correct one is correct by construction, not by the
// checker's say-so: the checker's tests, its benchmark matrix and the
// regression check all draw from this one generator.
package classgen
