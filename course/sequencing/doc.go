// Package sequencing is the SCORM 2004 4th edition Sequencing and Navigation (SN book)
// sequencer: the activity state tree of one registration and the processes of the book's
// pseudo-code (navigation, termination, sequencing, delivery and rollup) that move it.
//
// The package is pure: it reads a parsed *course.Package, imports nothing but course and the
// standard library, and keeps its state in a State value the caller persists as JSON with the
// registration between requests. Global objectives are read and written through the Globals
// interface so the caller decides their scope (the course attempt, or the learner across
// courses when objectivesGlobalToSystem says so: course.Package.SystemObjectives names them, ShareGlobals
// and SharedChanges carry them between the State and the learner's store).
//
// Function doc comments name the book's process ids (NB.2.1, TB.2.3, SB.2.9, DB.2, RB.1.5,
// UP.4, …) so a reader can hold the code against the pseudo-code.
package sequencing
