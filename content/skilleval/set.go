// Package skilleval measures SKILLS generation (issue 13): precision@5 and recall@5 of the
// built-in generator (content.Builtin) with and without a taxonomy beside a plain keyword
// baseline (BenchmarkSkillsESCO and BenchmarkSkills, run by `make bench`), on two sets. The
// ESCO set (esco.go) is public: 27 ESCO occupations with the ESCO skills we expect for each
// (our annotation, esco_set.csv), against the full ESCO skills list as the taxonomy; the ESCO
// data (© European Union, CC BY 4.0) is installed by scripts/install-esco.sh, never
// committed. The self-written set (Set, Taxonomy) is 12 short course and job descriptions
// written for this project with a 50-skill taxonomy. The taxonomy import time is
// workers/taxonomyjob's BenchmarkTaxonomyImport.
package skilleval

import (
	"fmt"
	"strings"

	"github.com/lectern-lms/lectern/mappings/analysis"
)

// Item is one description with its expected skills (names of Taxonomy).
type Item struct {
	Text   string
	Skills []string
}

// Taxonomy is the evaluation's skill list, in the style of ESCO's preferred labels.
var Taxonomy = []string{
	"cook meals", "prepare sauces", "use knives safely", "bake bread", "food hygiene",
	"analyse data with spreadsheets", "create charts", "write SQL queries", "clean data", "statistical analysis",
	"program in Python", "test software", "use version control", "design web pages", "write JavaScript",
	"give first aid", "perform CPR", "fire safety", "evacuate buildings", "report hazards",
	"manage projects", "plan budgets", "lead teams", "negotiate contracts", "give presentations",
	"provide customer service", "handle complaints", "sell products", "write marketing copy", "use social media",
	"weld metal", "operate forklifts", "read technical drawings", "maintain machinery", "use hand tools",
	"care for patients", "administer medication", "measure vital signs", "keep medical records", "assist with hygiene",
	"teach children", "plan lessons", "assess students", "manage a classroom", "speak Spanish",
	"grow vegetables", "prune trees", "drive a truck", "keep accounts", "prepare tax returns",
}

// Set is the evaluation set: descriptions written for this project (course outlines and job
// advertisements in the usual style), with the taxonomy skills they teach or ask for.
var Set = []Item{
	{"Kitchen foundations. Learn to hold a chef's knife, dice onions and keep your fingers safe while slicing. Make a roux, a béchamel and a tomato sauce, and keep the kitchen clean to hygiene standards.",
		[]string{"use knives safely", "prepare sauces", "food hygiene", "cook meals"}},
	{"Junior data analyst wanted. You will clean messy sales exports, build pivot tables and charts in Excel, and write SQL queries against our warehouse to answer questions from the sales team.",
		[]string{"analyse data with spreadsheets", "create charts", "write SQL queries", "clean data"}},
	{"Python for beginners. Write your first programs in Python, use lists and functions, write unit tests for your code and keep your work in a Git repository.",
		[]string{"program in Python", "test software", "use version control"}},
	{"Workplace first aid. Check the scene, call for help, perform chest compressions and rescue breaths, put a casualty in the recovery position and treat bleeding and burns.",
		[]string{"give first aid", "perform CPR"}},
	{"Fire warden training. Learn how fires start and spread, choose the right extinguisher, lead an evacuation to the assembly point and report hazards you find on your floor.",
		[]string{"fire safety", "evacuate buildings", "report hazards"}},
	{"Project manager. Plan and track projects from kickoff to delivery, keep the budget on course, lead a team of eight and present progress to the board every month.",
		[]string{"manage projects", "plan budgets", "lead teams", "give presentations"}},
	{"Customer service advisor. Answer customer calls and chats, resolve complaints calmly, and recommend products that fit what the customer needs.",
		[]string{"provide customer service", "handle complaints", "sell products"}},
	{"Welder fabricator. Read engineering drawings, cut and weld steel parts with MIG and TIG, maintain the workshop machines and use grinders and other hand tools safely.",
		[]string{"weld metal", "read technical drawings", "maintain machinery", "use hand tools"}},
	{"Healthcare assistant. Help patients wash and dress, take temperature, pulse and blood pressure, record observations in the patient notes, and support nurses with medicines rounds.",
		[]string{"care for patients", "measure vital signs", "keep medical records", "assist with hygiene", "administer medication"}},
	{"Primary teacher. Plan engaging lessons in maths and reading, mark work and track each pupil's progress, and keep a calm, well-ordered classroom.",
		[]string{"teach children", "plan lessons", "assess students", "manage a classroom"}},
	{"Social media for small businesses. Write posts and short ads that sell, schedule them on Instagram and Facebook, and read the numbers to see what works.",
		[]string{"use social media", "write marketing copy"}},
	{"Bookkeeping basics. Record sales and purchases, reconcile the bank account, prepare the year-end accounts and file a simple tax return for a sole trader.",
		[]string{"keep accounts", "prepare tax returns"}},
}

// Scores are precision@k and recall@k averaged over the set (a description with no generated
// skill has precision 0).
type Scores struct{ Precision, Recall float64 }

// String formats the scores.
func (s Scores) String() string { return fmt.Sprintf("P %.2f R %.2f", s.Precision, s.Recall) }

// Score averages precision@k and recall@k; match says whether a generated skill is one of
// the expected ones (each expected skill counts once).
func Score(got [][]string, k int, match func(got, want string) bool) Scores {
	want := make([][]string, len(Set))
	for i, it := range Set {
		want[i] = it.Skills
	}
	return ScoreAgainst(got, want, k, match)
}

// ScoreAgainst is Score for any set: want[i] are the expected skills of got[i].
func ScoreAgainst(got, want [][]string, k int, match func(got, want string) bool) Scores {
	var s Scores
	for i, exp := range want {
		g := got[i]
		if len(g) > k {
			g = g[:k]
		}
		used := make([]bool, len(exp))
		hits := 0
		for _, x := range g {
			for j, w := range exp {
				if !used[j] && match(x, w) {
					used[j] = true
					hits++
					break
				}
			}
		}
		if len(g) > 0 {
			s.Precision += float64(hits) / float64(len(g))
		}
		s.Recall += float64(hits) / float64(len(exp))
	}
	s.Precision /= float64(len(want))
	s.Recall /= float64(len(want))
	return s
}

// Exact matches taxonomy names.
func Exact(got, want string) bool { return strings.EqualFold(got, want) }

// Overlap matches a freely generated phrase to an expected skill when they share a content
// lexeme (stemmed, stop words dropped): "chest compressions" does not match "perform CPR",
// "sql queries" matches "write SQL queries".
func Overlap(got, want string) bool {
	w := map[string]bool{}
	for _, l := range analysis.Lexemes(want) {
		w[l] = true
	}
	for _, l := range analysis.Lexemes(got) {
		if w[l] {
			return true
		}
	}
	return false
}

// KeywordBaseline ranks the taxonomy skills by how many of their lexemes occur in the text
// (all of a skill's lexemes count double), the plain keyword matching a system without
// embeddings would do; skills without a shared lexeme are left out.
func KeywordBaseline(text string, taxonomy []string, k int) []string {
	in := map[string]bool{}
	for _, l := range analysis.Lexemes(text) {
		in[l] = true
	}
	type sc struct {
		s string
		n int
	}
	var out []sc
	for _, s := range taxonomy {
		ls := analysis.Lexemes(s)
		n := 0
		for _, l := range ls {
			if in[l] {
				n++
			}
		}
		if n == len(ls) {
			n *= 2
		}
		if n > 0 {
			out = append(out, sc{s, n})
		}
	}
	for i := 1; i < len(out); i++ { // stable insertion sort by score
		for j := i; j > 0 && out[j].n > out[j-1].n; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	var names []string
	for _, x := range out {
		if len(names) == k {
			break
		}
		names = append(names, x.s)
	}
	return names
}
