package course

import "github.com/google/uuid"

// cmi5IDSpace is the UUIDv5 namespace of the LMS's own cmi5 activity ids.
var cmi5IDSpace = uuid.MustParse("0b6f6c1e-8f0e-5d2a-9a57-6c6563746572")

// CMI5LMSActivityID is the activity id the LMS itself uses for a cmi5 AU (the launch's
// activityId, cmi5 8.1.5), block or course (the object of its satisfied statements, 9.3.9):
// never the publisher's id from cmi5.xml (8.1.5.0-3, 9.3.9.0-4, 9.3.9.0-8), the same for
// every launch of every registration of the course and for every version of it
// (8.1.5.0-4), and different for every course, block and AU (8.1.5.0-1, 9.3.9.0-3,
// 9.3.9.0-7): urn:lectern:cmi5:<au|block|course>:<UUIDv5 of the course's and the
// activity's publisher ids>. Empty for an activity that is not a cmi5 course, block or AU.
func (p *Package) CMI5LMSActivityID(a *Activity) string {
	if p == nil || a == nil || p.Standard != CMI5 {
		return ""
	}
	course := p.XAPIActivityID
	if course == "" && p.Root != nil && p.Root.CMI5 != nil {
		course = p.Root.CMI5.ID
	}
	if course == "" {
		course = p.Identifier
	}
	kind, id := "au", ""
	switch {
	case a == p.Root:
		kind, id = "course", course
	case a.CMI5 == nil || a.CMI5.ID == "":
		return ""
	case a.CMI5.Block:
		kind, id = "block", a.CMI5.ID
	default:
		id = a.CMI5.ID
	}
	return "urn:lectern:cmi5:" + kind + ":" + uuid.NewSHA1(cmi5IDSpace, []byte(kind+"\n"+course+"\n"+id)).String()
}
