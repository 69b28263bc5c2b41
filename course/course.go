// Package course is the course engine's domain: the one model every learning standard's
// package is parsed into (an activity tree with launch data, mastery, thresholds, objectives
// and sequencing), and later registrations, runtime and rollup. It imports neither HTTP nor
// database code; parsers live in subpackages (scorm, aicc, tincan, cmi5) and course/parse
// picks one from a package's contents.
package course

import (
	"errors"
	"fmt"
)

// Standard is a learning standard, spelled as the engine API's courseLearningStandard.
type Standard string

// The standards Lectern imports.
const (
	SCORM11     Standard = "SCORM_11"
	SCORM12     Standard = "SCORM_12"
	SCORM2004v2 Standard = "SCORM_2004_2ND_EDITION"
	SCORM2004v3 Standard = "SCORM_2004_3RD_EDITION"
	SCORM2004v4 Standard = "SCORM_2004_4TH_EDITION"
	AICC        Standard = "AICC"
	XAPI        Standard = "XAPI"
	CMI5        Standard = "CMI5"
	UnknownStd  Standard = "UNKNOWN"
)

// IsSCORM2004 reports whether s is one of the SCORM 2004 editions.
func (s Standard) IsSCORM2004() bool {
	return s == SCORM2004v2 || s == SCORM2004v3 || s == SCORM2004v4
}

// ErrInvalidPackage is wrapped by every fatal parse problem; the import job ends in ERROR with
// the message, which names the file and the problem.
var ErrInvalidPackage = errors.New("invalid course package")

// Invalid returns a fatal package error with a formatted message.
func Invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidPackage, fmt.Sprintf(format, args...))
}

// Package is a parsed course package: the same shape for every standard.
type Package struct {
	Standard Standard `json:"standard"`
	// Identifier is the package's own id: the manifest identifier (SCORM), the course id
	// (AICC .crs), the course id (cmi5) or the root activity id (xAPI).
	Identifier string `json:"identifier"`
	Title      string `json:"title"`
	// Version is the manifest's version attribute when there is one.
	Version string `json:"version,omitempty"`
	// SchemaVersion is the SCORM metadata schemaversion as written ("1.2", "2004 4th Edition").
	SchemaVersion string    `json:"schemaVersion,omitempty"`
	Metadata      *Metadata `json:"metadata,omitempty"`
	// XAPIActivityID is the course's activity IRI (xAPI and cmi5; derived for others later).
	XAPIActivityID string `json:"xapiActivityId,omitempty"`
	// Root is the activity tree: for SCORM the default organization, for AICC the course, for
	// cmi5 the course with its blocks, for xAPI the course with its launchable activities.
	Root *Activity `json:"root"`
	// Organizations lists every SCORM organization (Root is one of them); empty otherwise.
	Organizations []*Activity `json:"organizations,omitempty"`
	// SequencingCollection holds shared sequencing definitions (SCORM 2004 imsss:sequencingCollection).
	SequencingCollection map[string]*Sequencing `json:"sequencingCollection,omitempty"`
	// Files lists the files the package declares (resource files); used to warn about missing ones.
	Files []string `json:"-"`
	// Warnings are the non-fatal oddities found while parsing (the import's parserWarnings).
	Warnings []string `json:"warnings"`
}

// Metadata is the descriptive metadata a package carries (LOM or its standard's own fields).
type Metadata struct {
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Keywords    []string `json:"keywords,omitempty"`
	Language    string   `json:"language,omitempty"`
	Duration    string   `json:"duration,omitempty"`
	Author      string   `json:"author,omitempty"`
}

// Activity is one node of the activity tree. Leaves are launchable (LaunchURL set) or not
// (SCORM items without a resource are containers).
type Activity struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Visible is SCORM isvisible (default true).
	Visible bool `json:"visible"`
	// LaunchURL is the resolved launch location: relative to the package root for packaged
	// content (xml:base and item parameters applied), or an absolute URL.
	LaunchURL string `json:"launchUrl,omitempty"`
	// ResourceID and ScormType describe the SCORM resource (sco or asset).
	ResourceID string `json:"resourceId,omitempty"`
	ScormType  string `json:"scormType,omitempty"`
	// MasteryScore is the passing score: SCORM 1.2 adlcp:masteryscore and AICC mastery_score
	// on a 0-100 scale; cmi5 masteryScore and SCORM 2004 minNormalizedMeasure as 0-1.
	MasteryScore *float64 `json:"masteryScore,omitempty"`
	// CompletionThreshold is SCORM 2004 adlcp:completionThreshold (minProgressMeasure 0-1).
	CompletionThreshold *CompletionThreshold `json:"completionThreshold,omitempty"`
	DataFromLMS         string               `json:"dataFromLms,omitempty"`
	MaxTimeAllowed      string               `json:"maxTimeAllowed,omitempty"`
	TimeLimitAction     string               `json:"timeLimitAction,omitempty"`
	// Prerequisites is the SCORM 1.2 adlcp:prerequisites or AICC .pre expression as written.
	Prerequisites string `json:"prerequisites,omitempty"`
	// Objectives are SCORM 2004 imsss objectives of the item (primary first) or AICC .cst/.ort data.
	Objectives []Objective `json:"objectives,omitempty"`
	Sequencing *Sequencing `json:"sequencing,omitempty"`
	CMI5       *CMI5AU     `json:"cmi5,omitempty"`
	AICC       *AICCUnit   `json:"aicc,omitempty"`
	// SharedData lists the SCORM 2004 4th edition adlcp:data maps: the shared data stores
	// (adl.data) the activity's SCO may read or write.
	SharedData []SharedDataMap `json:"sharedData,omitempty"`
	// HideLMSUI lists the SCORM 2004 adlnav:hideLMSUI values of the item (previous,
	// continue, exit, exitAll, abandon, abandonAll, suspendAll): the player's controls that
	// the SCO replaces with its own while it runs.
	HideLMSUI []string     `json:"hideLmsUi,omitempty"`
	Metadata  *Metadata    `json:"metadata,omitempty"`
	Children  []*Activity  `json:"children,omitempty"`
	Extra     *ActivityExt `json:"extra,omitempty"`
}

// ActivityExt carries rarely used per-standard attributes.
type ActivityExt struct {
	// ActivityType is the xAPI/cmi5 activity type IRI.
	ActivityType string `json:"activityType,omitempty"`
	// XAPIActivityID is the activity IRI of an xAPI or cmi5 node.
	XAPIActivityID string `json:"xapiActivityId,omitempty"`
	// ObjectivesGlobalToSystem is adlseq:objectivesGlobalToSystem of a SCORM 2004
	// organization: whether its global objectives are shared with every other course of the
	// learner (true, the default when absent) or belong to this course's attempt.
	ObjectivesGlobalToSystem *bool `json:"objectivesGlobalToSystem,omitempty"`
	// SharedDataGlobalToSystem is adlcp:sharedDataGlobalToSystem of a SCORM 2004 4th
	// edition organization: whether its shared data stores persist across attempts on the
	// course (true, the default when absent) or are reset with each new attempt.
	SharedDataGlobalToSystem *bool `json:"sharedDataGlobalToSystem,omitempty"`
}

// SharedDataMap is one adlcp:map of an item's adlcp:data. Absent attributes stay nil, so the
// runtime applies the CAM's defaults at use time rather than the parser baking them in.
type SharedDataMap struct {
	// TargetID names the shared data store; equal ids in one activity tree share it.
	TargetID        string `json:"targetId"`
	ReadSharedData  *bool  `json:"readSharedData,omitempty"`
	WriteSharedData *bool  `json:"writeSharedData,omitempty"`
}

// CompletionThreshold is SCORM 2004 4th edition's completionThreshold element (or the 3rd
// edition's plain value as MinProgressMeasure).
type CompletionThreshold struct {
	CompletedByMeasure bool    `json:"completedByMeasure"`
	MinProgressMeasure float64 `json:"minProgressMeasure"`
	ProgressWeight     float64 `json:"progressWeight"`
}

// Objective is a learning objective with its satisfaction rules.
type Objective struct {
	ID                   string   `json:"id"`
	Primary              bool     `json:"primary,omitempty"`
	SatisfiedByMeasure   bool     `json:"satisfiedByMeasure,omitempty"`
	MinNormalizedMeasure *float64 `json:"minNormalizedMeasure,omitempty"`
	// Maps are imsss:mapInfo links to global objectives.
	Maps []ObjectiveMap `json:"maps,omitempty"`
}

// ObjectiveMap links a local objective to a global one.
type ObjectiveMap struct {
	TargetObjectiveID      string `json:"targetObjectiveId"`
	ReadSatisfiedStatus    bool   `json:"readSatisfiedStatus"`
	ReadNormalizedMeasure  bool   `json:"readNormalizedMeasure"`
	WriteSatisfiedStatus   bool   `json:"writeSatisfiedStatus,omitempty"`
	WriteNormalizedMeasure bool   `json:"writeNormalizedMeasure,omitempty"`
}

// Sequencing is the IMS Simple Sequencing data of an activity (SCORM 2004), kept for the
// sequencer. Absent elements take the IMS SS defaults at use time, so only what the manifest
// says is recorded; pointers distinguish "absent" from "false".
type Sequencing struct {
	// IDRef names a definition in Package.SequencingCollection this one extends.
	IDRef       string       `json:"idRef,omitempty"`
	ControlMode *ControlMode `json:"controlMode,omitempty"`
	// PreConditionRules, ExitConditionRules and PostConditionRules are sequencing rules.
	PreConditionRules  []SequencingRule `json:"preConditionRules,omitempty"`
	ExitConditionRules []SequencingRule `json:"exitConditionRules,omitempty"`
	PostConditionRules []SequencingRule `json:"postConditionRules,omitempty"`
	LimitConditions    *LimitConditions `json:"limitConditions,omitempty"`
	RollupRules        *RollupRules     `json:"rollupRules,omitempty"`
	// Objectives are also copied to Activity.Objectives for convenience.
	Objectives            []Objective       `json:"objectives,omitempty"`
	RandomizationControls *Randomization    `json:"randomizationControls,omitempty"`
	DeliveryControls      *DeliveryControls `json:"deliveryControls,omitempty"`
	// ADLSeq holds adlseq extensions: constrainedChoiceConsiderations and rollupConsiderations.
	ConstrainChoice             *bool  `json:"constrainChoice,omitempty"`
	PreventActivation           *bool  `json:"preventActivation,omitempty"`
	RequiredForSatisfied        string `json:"requiredForSatisfied,omitempty"`
	RequiredForNotSatisfied     string `json:"requiredForNotSatisfied,omitempty"`
	RequiredForCompleted        string `json:"requiredForCompleted,omitempty"`
	RequiredForIncomplete       string `json:"requiredForIncomplete,omitempty"`
	MeasureSatisfactionIfActive *bool  `json:"measureSatisfactionIfActive,omitempty"`
	// ADLObjectives are the SCORM 2004 4th edition adlseq:objectives: extra maps of the
	// imsss objective with the same id, for raw/min/max score, completion status and
	// progress measure.
	ADLObjectives []ADLObjective `json:"adlObjectives,omitempty"`
}

// ADLObjective is one adlseq:objective: the extended global-objective maps of the imsss
// objective whose id it names.
type ADLObjective struct {
	ObjectiveID string            `json:"objectiveId"`
	Maps        []ADLObjectiveMap `json:"maps"`
}

// ADLObjectiveMap is one adlseq:mapInfo. Only what the manifest says is recorded (nil when
// absent); the defaults — every read* true, every write* false — apply at use time.
type ADLObjectiveMap struct {
	TargetObjectiveID     string `json:"targetObjectiveId"`
	ReadRawScore          *bool  `json:"readRawScore,omitempty"`
	ReadMinScore          *bool  `json:"readMinScore,omitempty"`
	ReadMaxScore          *bool  `json:"readMaxScore,omitempty"`
	ReadCompletionStatus  *bool  `json:"readCompletionStatus,omitempty"`
	ReadProgressMeasure   *bool  `json:"readProgressMeasure,omitempty"`
	WriteRawScore         *bool  `json:"writeRawScore,omitempty"`
	WriteMinScore         *bool  `json:"writeMinScore,omitempty"`
	WriteMaxScore         *bool  `json:"writeMaxScore,omitempty"`
	WriteCompletionStatus *bool  `json:"writeCompletionStatus,omitempty"`
	WriteProgressMeasure  *bool  `json:"writeProgressMeasure,omitempty"`
}

// ControlMode is imsss:controlMode.
type ControlMode struct {
	Choice                         *bool `json:"choice,omitempty"`
	ChoiceExit                     *bool `json:"choiceExit,omitempty"`
	Flow                           *bool `json:"flow,omitempty"`
	ForwardOnly                    *bool `json:"forwardOnly,omitempty"`
	UseCurrentAttemptObjectiveInfo *bool `json:"useCurrentAttemptObjectiveInfo,omitempty"`
	UseCurrentAttemptProgressInfo  *bool `json:"useCurrentAttemptProgressInfo,omitempty"`
}

// SequencingRule is one pre/exit/post condition rule.
type SequencingRule struct {
	ConditionCombination string          `json:"conditionCombination,omitempty"`
	Conditions           []RuleCondition `json:"conditions"`
	Action               string          `json:"action"`
}

// RuleCondition is one rule condition.
type RuleCondition struct {
	Condition           string   `json:"condition"`
	Operator            string   `json:"operator,omitempty"`
	ReferencedObjective string   `json:"referencedObjective,omitempty"`
	MeasureThreshold    *float64 `json:"measureThreshold,omitempty"`
}

// LimitConditions is imsss:limitConditions.
type LimitConditions struct {
	AttemptLimit                 *int   `json:"attemptLimit,omitempty"`
	AttemptAbsoluteDurationLimit string `json:"attemptAbsoluteDurationLimit,omitempty"`
}

// RollupRules is imsss:rollupRules.
type RollupRules struct {
	RollupObjectiveSatisfied *bool        `json:"rollupObjectiveSatisfied,omitempty"`
	RollupProgressCompletion *bool        `json:"rollupProgressCompletion,omitempty"`
	ObjectiveMeasureWeight   *float64     `json:"objectiveMeasureWeight,omitempty"`
	Rules                    []RollupRule `json:"rules,omitempty"`
}

// RollupRule is one imsss:rollupRule.
type RollupRule struct {
	ChildActivitySet     string          `json:"childActivitySet,omitempty"`
	MinimumCount         *int            `json:"minimumCount,omitempty"`
	MinimumPercent       *float64        `json:"minimumPercent,omitempty"`
	ConditionCombination string          `json:"conditionCombination,omitempty"`
	Conditions           []RuleCondition `json:"conditions"`
	Action               string          `json:"action"`
}

// Randomization is imsss:randomizationControls.
type Randomization struct {
	RandomizationTiming string `json:"randomizationTiming,omitempty"`
	SelectCount         *int   `json:"selectCount,omitempty"`
	ReorderChildren     *bool  `json:"reorderChildren,omitempty"`
	SelectionTiming     string `json:"selectionTiming,omitempty"`
}

// DeliveryControls is imsss:deliveryControls.
type DeliveryControls struct {
	Tracked                *bool `json:"tracked,omitempty"`
	CompletionSetByContent *bool `json:"completionSetByContent,omitempty"`
	ObjectiveSetByContent  *bool `json:"objectiveSetByContent,omitempty"`
}

// CMI5AU is the cmi5 data of an assignable unit (or of a block, with only ID set).
type CMI5AU struct {
	// ID is the publisher's AU/block IRI from cmi5.xml.
	ID               string   `json:"id"`
	MoveOn           string   `json:"moveOn,omitempty"`
	MasteryScore     *float64 `json:"masteryScore,omitempty"`
	LaunchMethod     string   `json:"launchMethod,omitempty"`
	LaunchParameters string   `json:"launchParameters,omitempty"`
	EntitlementKey   string   `json:"entitlementKey,omitempty"`
	ActivityType     string   `json:"activityType,omitempty"`
	Block            bool     `json:"block,omitempty"`
}

// AICCUnit is the AICC data of an assignable unit (.au and .des rows).
type AICCUnit struct {
	SystemID        string `json:"systemId"`
	Type            string `json:"type,omitempty"`
	CommandLine     string `json:"commandLine,omitempty"`
	FileName        string `json:"fileName,omitempty"`
	CoreVendor      string `json:"coreVendor,omitempty"`
	WebLaunch       string `json:"webLaunch,omitempty"`
	AUPassword      string `json:"-"`
	DeveloperID     string `json:"developerId,omitempty"`
	MaxScore        string `json:"maxScore,omitempty"`
	TimeLimitAction string `json:"timeLimitAction,omitempty"`
}

// Walk calls fn for a and every descendant, depth first in document order.
func (a *Activity) Walk(fn func(*Activity)) {
	if a == nil {
		return
	}
	fn(a)
	for _, c := range a.Children {
		c.Walk(fn)
	}
}

// Launchable returns the activities with a launch URL in document order.
func (p *Package) Launchable() []*Activity {
	var out []*Activity
	p.Root.Walk(func(a *Activity) {
		if a.LaunchURL != "" {
			out = append(out, a)
		}
	})
	return out
}
