package scorm

import (
	"slices"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/course"
)

// The helpers below record only what the manifest says: absent attributes stay nil so the
// sequencer applies the IMS SS defaults at use time, and malformed values are dropped with a
// warning rather than failing the import, because one bad attribute should not cost a course.

func (p *parser) boolAttr(n *node, name, where string) *bool {
	v, ok := n.attr(name)
	if !ok {
		return nil
	}
	b, ok := parseBool(v)
	if !ok {
		p.warnf("%s: %s=%q is not a boolean; ignored", where, name, v)
		return nil
	}
	return &b
}

func (p *parser) intAttr(n *node, name, where string) *int {
	v, ok := n.attr(name)
	if !ok {
		return nil
	}
	i, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || i < 0 {
		p.warnf("%s: %s=%q is not a non-negative integer; ignored", where, name, v)
		return nil
	}
	return &i
}

func (p *parser) floatAttr(n *node, name, where string) *float64 {
	v, ok := n.attr(name)
	if !ok {
		return nil
	}
	return p.parseFloat(v, name, where)
}

func (p *parser) parseFloat(v, name, where string) *float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f != f { // f != f rejects NaN, which would poison comparisons later
		p.warnf("%s: %s %q is not a number; ignored", where, name, v)
		return nil
	}
	return &f
}

// parseBool accepts the xs:boolean lexical forms, tolerating case and spaces.
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	return false, false
}

// sequencing reads an imsss:sequencing element (on an item, an organization or in the
// sequencingCollection).
func (p *parser) sequencing(n *node, where string) *course.Sequencing {
	s := &course.Sequencing{IDRef: n.attrS("IDRef")}
	for _, c := range n.children {
		switch {
		case c.is("controlMode"):
			s.ControlMode = &course.ControlMode{
				Choice:                         p.boolAttr(c, "choice", where),
				ChoiceExit:                     p.boolAttr(c, "choiceExit", where),
				Flow:                           p.boolAttr(c, "flow", where),
				ForwardOnly:                    p.boolAttr(c, "forwardOnly", where),
				UseCurrentAttemptObjectiveInfo: p.boolAttr(c, "useCurrentAttemptObjectiveInfo", where),
				UseCurrentAttemptProgressInfo:  p.boolAttr(c, "useCurrentAttemptProgressInfo", where),
			}
		case c.is("sequencingRules"):
			for _, r := range c.children {
				switch {
				case r.is("preConditionRule"):
					s.PreConditionRules = append(s.PreConditionRules, p.seqRule(r, where))
				case r.is("exitConditionRule"):
					s.ExitConditionRules = append(s.ExitConditionRules, p.seqRule(r, where))
				case r.is("postConditionRule"):
					s.PostConditionRules = append(s.PostConditionRules, p.seqRule(r, where))
				}
			}
		case c.is("limitConditions"):
			s.LimitConditions = &course.LimitConditions{
				AttemptLimit:                 p.intAttr(c, "attemptLimit", where),
				AttemptAbsoluteDurationLimit: c.attrS("attemptAbsoluteDurationLimit"),
			}
		case c.is("rollupRules"):
			rr := &course.RollupRules{
				RollupObjectiveSatisfied: p.boolAttr(c, "rollupObjectiveSatisfied", where),
				RollupProgressCompletion: p.boolAttr(c, "rollupProgressCompletion", where),
				ObjectiveMeasureWeight:   p.floatAttr(c, "objectiveMeasureWeight", where),
			}
			for _, r := range c.all("rollupRule") {
				rule := course.RollupRule{
					ChildActivitySet: r.attrS("childActivitySet"),
					MinimumCount:     p.intAttr(r, "minimumCount", where),
					MinimumPercent:   p.floatAttr(r, "minimumPercent", where),
					Conditions:       []course.RuleCondition{},
				}
				if rc := r.child("rollupConditions"); rc != nil {
					rule.ConditionCombination = rc.attrS("conditionCombination")
					for _, cond := range rc.all("rollupCondition") {
						rule.Conditions = append(rule.Conditions, course.RuleCondition{
							Condition: cond.attrS("condition"),
							Operator:  cond.attrS("operator"),
						})
					}
				}
				if a := r.child("rollupAction"); a != nil {
					rule.Action = a.attrS("action")
				}
				rr.Rules = append(rr.Rules, rule)
			}
			s.RollupRules = rr
		case c.is("objectives") && c.inNS("adlseq"):
			// adlseq:objectives (4th edition) shares the local name with imsss:objectives.
			for _, o := range c.all("objective") {
				s.ADLObjectives = append(s.ADLObjectives, p.adlObjective(o, where))
			}
		case c.is("objectives"):
			if po := c.child("primaryObjective"); po != nil {
				o := p.objective(po, where)
				o.Primary = true
				s.Objectives = append(s.Objectives, o)
			}
			for _, o := range c.all("objective") {
				s.Objectives = append(s.Objectives, p.objective(o, where))
			}
		case c.is("randomizationControls"):
			s.RandomizationControls = &course.Randomization{
				RandomizationTiming: c.attrS("randomizationTiming"),
				SelectCount:         p.intAttr(c, "selectCount", where),
				ReorderChildren:     p.boolAttr(c, "reorderChildren", where),
				SelectionTiming:     c.attrS("selectionTiming"),
			}
		case c.is("deliveryControls"):
			s.DeliveryControls = &course.DeliveryControls{
				Tracked:                p.boolAttr(c, "tracked", where),
				CompletionSetByContent: p.boolAttr(c, "completionSetByContent", where),
				ObjectiveSetByContent:  p.boolAttr(c, "objectiveSetByContent", where),
			}
		case c.is("constrainedChoiceConsiderations"):
			s.PreventActivation = p.boolAttr(c, "preventActivation", where)
			s.ConstrainChoice = p.boolAttr(c, "constrainChoice", where)
		case c.is("rollupConsiderations"):
			s.RequiredForSatisfied = c.attrS("requiredForSatisfied")
			s.RequiredForNotSatisfied = c.attrS("requiredForNotSatisfied")
			s.RequiredForCompleted = c.attrS("requiredForCompleted")
			s.RequiredForIncomplete = c.attrS("requiredForIncomplete")
			s.MeasureSatisfactionIfActive = p.boolAttr(c, "measureSatisfactionIfActive", where)
		}
	}
	for _, ao := range s.ADLObjectives {
		if !slices.ContainsFunc(s.Objectives, func(o course.Objective) bool { return o.ID == ao.ObjectiveID }) {
			p.warnf("%s: adlseq:objective %q names no imsss objective of the same sequencing; its maps have nothing to extend", where, ao.ObjectiveID)
		}
	}
	return s
}

// adlObjective reads an adlseq:objective and its adlseq:mapInfo elements.
func (p *parser) adlObjective(n *node, where string) course.ADLObjective {
	o := course.ADLObjective{ObjectiveID: n.attrID("objectiveID"), Maps: []course.ADLObjectiveMap{}}
	for _, mi := range n.all("mapInfo") {
		target := mi.attrID("targetObjectiveID")
		if target == "" {
			p.warnf("%s: adlseq:mapInfo of objective %q has no targetObjectiveID; ignored", where, o.ObjectiveID)
			continue
		}
		o.Maps = append(o.Maps, course.ADLObjectiveMap{
			TargetObjectiveID:     target,
			ReadRawScore:          p.boolAttr(mi, "readRawScore", where),
			ReadMinScore:          p.boolAttr(mi, "readMinScore", where),
			ReadMaxScore:          p.boolAttr(mi, "readMaxScore", where),
			ReadCompletionStatus:  p.boolAttr(mi, "readCompletionStatus", where),
			ReadProgressMeasure:   p.boolAttr(mi, "readProgressMeasure", where),
			WriteRawScore:         p.boolAttr(mi, "writeRawScore", where),
			WriteMinScore:         p.boolAttr(mi, "writeMinScore", where),
			WriteMaxScore:         p.boolAttr(mi, "writeMaxScore", where),
			WriteCompletionStatus: p.boolAttr(mi, "writeCompletionStatus", where),
			WriteProgressMeasure:  p.boolAttr(mi, "writeProgressMeasure", where),
		})
	}
	return o
}

// seqRule reads a pre/exit/post condition rule.
func (p *parser) seqRule(r *node, where string) course.SequencingRule {
	rule := course.SequencingRule{Conditions: []course.RuleCondition{}}
	if rc := r.child("ruleConditions"); rc != nil {
		rule.ConditionCombination = rc.attrS("conditionCombination")
		for _, c := range rc.all("ruleCondition") {
			rule.Conditions = append(rule.Conditions, course.RuleCondition{
				Condition:           c.attrS("condition"),
				Operator:            c.attrS("operator"),
				ReferencedObjective: c.attrID("referencedObjective"),
				MeasureThreshold:    p.floatAttr(c, "measureThreshold", where),
			})
		}
	}
	if a := r.child("ruleAction"); a != nil {
		rule.Action = a.attrS("action")
	}
	return rule
}

// objective reads an imsss:primaryObjective or imsss:objective. mapInfo booleans are stored
// with their IMS SS defaults applied (read* true, write* false) because ObjectiveMap has no
// pointers to express "absent".
func (p *parser) objective(n *node, where string) course.Objective {
	o := course.Objective{ID: n.attrID("objectiveID")}
	if b := p.boolAttr(n, "satisfiedByMeasure", where); b != nil {
		o.SatisfiedByMeasure = *b
	}
	if m := n.child("minNormalizedMeasure"); m != nil {
		if f := p.parseFloat(m.text, "minNormalizedMeasure", where); f != nil {
			if *f < -1 || *f > 1 {
				p.warnf("%s: minNormalizedMeasure %v is outside -1..1", where, *f)
			}
			o.MinNormalizedMeasure = f
		}
	}
	for _, mi := range n.all("mapInfo") {
		if mi.inNS("adlseq") {
			continue
		}
		m := course.ObjectiveMap{
			TargetObjectiveID:     mi.attrID("targetObjectiveID"),
			ReadSatisfiedStatus:   true,
			ReadNormalizedMeasure: true,
		}
		if b := p.boolAttr(mi, "readSatisfiedStatus", where); b != nil {
			m.ReadSatisfiedStatus = *b
		}
		if b := p.boolAttr(mi, "readNormalizedMeasure", where); b != nil {
			m.ReadNormalizedMeasure = *b
		}
		if b := p.boolAttr(mi, "writeSatisfiedStatus", where); b != nil {
			m.WriteSatisfiedStatus = *b
		}
		if b := p.boolAttr(mi, "writeNormalizedMeasure", where); b != nil {
			m.WriteNormalizedMeasure = *b
		}
		o.Maps = append(o.Maps, m)
	}
	return o
}
