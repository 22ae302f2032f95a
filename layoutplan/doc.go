// Package layoutplan answers the questions asked before a layout goes into
// production, not while IDs are issued: which layouts fit a fleet's
// nodes, rate and lifetime ([Fits]), and whether switching from one
// layout or epoch to another keeps ORDER BY id in time order
// ([CheckMigration]).
//
// It lives apart from package ringflake because its audience does: the
// people who plan a deployment or a migration once, not every program
// that issues IDs. It uses only the root package's public [ringflake.Layout]
// API; the root package does not import it. A generator that must start
// above the IDs a table already holds needs no planning: give New the
// table's greatest ID with [ringflake.WithExistingID].
package layoutplan
