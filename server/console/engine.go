package console

import (
	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/registration"
)

// The bodies of the course engine API the console's course pages send and read. The engine's
// handlers are still in the root package (server/courses.go, server/registrations.go), which
// this package cannot import; these mirror their JSON member for member until the engine
// API has its own package.

// importRequest is the JSON body of an import job.
type importRequest struct {
	URL             *string `json:"url"`
	CourseName      *string `json:"courseName"`
	WebPathToCourse *string `json:"webPathToCourse"`
}

// importJobID is the answer to an import request.
type importJobID struct {
	Result string `json:"result"`
}

// importResult is an import job's state.
type importResult struct {
	Status         string                `json:"status"`
	Message        string                `json:"message"`
	CourseTitle    string                `json:"courseTitle"`
	ParserWarnings []string              `json:"parserWarnings"`
	Progress       course.ImportProgress `json:"progress"`
}

// courseSummary is one course version of the course list.
type courseSummary struct {
	ID                     string `json:"id"`
	Version                int    `json:"version"`
	Title                  string `json:"title"`
	CourseLearningStandard string `json:"courseLearningStandard"`
	Updated                string `json:"updated"`
}

// courseList is a page of course versions.
type courseList struct {
	Courses []courseSummary `json:"courses"`
	More    string          `json:"more,omitempty"`
}

// courseDetail is one version with its whole activity tree.
type courseDetail struct {
	courseSummary
	ParserWarnings []string         `json:"parserWarnings"`
	RootActivity   *course.Activity `json:"rootActivity"`
}

// launchLink is the answer of the launch link and preview operations.
type launchLink struct {
	LaunchLink string `json:"launchLink"`
}

// registrationCreate is the body of POST /registrations.
type registrationCreate struct {
	CourseID           string                 `json:"courseId"`
	Learner            *registration.Learner  `json:"learner"`
	RegistrationID     string                 `json:"registrationId"`
	ForCredit          *bool                  `json:"forCredit"`
	XAPIRegistrationID string                 `json:"xapiRegistrationId"`
	PostBack           *registration.PostBack `json:"postBack"`
}

// scoreBody is a score on the API's 0-100 scale.
type scoreBody struct {
	Scaled float64 `json:"scaled"`
}

// registrationSummary is the progress of one registration instance (and an item of the
// registration list).
type registrationSummary struct {
	ID                           string                       `json:"id"`
	Instance                     int                          `json:"instance"`
	Updated                      string                       `json:"updated"`
	RegistrationCompletion       string                       `json:"registrationCompletion"`
	RegistrationCompletionAmount *float64                     `json:"registrationCompletionAmount,omitempty"`
	RegistrationSuccess          string                       `json:"registrationSuccess"`
	Score                        *scoreBody                   `json:"score,omitempty"`
	TotalSecondsTracked          float64                      `json:"totalSecondsTracked"`
	FirstAccessDate              string                       `json:"firstAccessDate,omitempty"`
	LastAccessDate               string                       `json:"lastAccessDate,omitempty"`
	CompletedDate                string                       `json:"completedDate,omitempty"`
	CreatedDate                  string                       `json:"createdDate"`
	Course                       courseSummary                `json:"course"`
	Learner                      registration.Learner         `json:"learner"`
	GlobalObjectives             []any                        `json:"globalObjectives"`
	ActivityDetails              *registration.ActivityResult `json:"activityDetails,omitempty"`
}

// registrationList is a page of registrations.
type registrationList struct {
	Registrations []registrationSummary `json:"registrations"`
	More          string                `json:"more,omitempty"`
}
