package eval

// Item is one passage of the evaluation set and the one query written for it.
type Item struct {
	// ID is the content id the passage is indexed under.
	ID string
	// Passage is the text indexed (one chunk).
	Passage string
	// Query is a paraphrase of what the passage is about that shares no content lexeme with
	// it (mappings/analysis.Lexemes; TestSetDisjoint enforces it), so a lexical search cannot
	// find it and a semantic one must.
	Query string
}

// Set is the evaluation set: short learning passages from many domains, each with one
// paraphrased query whose only relevant answer is that passage. Written for Lectern; not
// taken from any dataset.
var Set = []Item{
	// Workplace safety.
	{"safety-extinguisher", "Before using a fire extinguisher, pull the pin, aim the nozzle at the base of the flames, squeeze the handle and sweep from side to side.",
		"putting out a blaze with a canister"},
	{"safety-ladder", "Keep three points of contact when climbing a ladder and never stand on the top rung.",
		"avoiding a fall while going up steps to reach high shelves"},
	{"safety-lifting", "Lift heavy boxes by bending your knees and keeping your back straight, holding the load close to your body.",
		"correct posture for picking up weighty cartons without spine injury"},
	{"safety-ppe", "Wear goggles, gloves and a hard hat on the construction site at all times.",
		"protective gear required while working on a building project"},
	{"safety-spill", "Report chemical spills immediately, cordon off the area and use the absorbent kit from the emergency cabinet.",
		"what to do when a hazardous liquid leaks onto the floor"},
	{"safety-evacuation", "When the alarm sounds, leave the building by the nearest exit and gather at the assembly point in the car park.",
		"where staff meet once everyone has evacuated during a drill"},
	{"safety-electrical", "Never touch a frayed cable; switch off the power at the mains before unplugging damaged equipment.",
		"dealing with worn electric wires safely"},

	// Personal and business finance.
	{"finance-budget", "A monthly budget lists expected income and planned spending so that you can see where your money goes.",
		"keeping tabs on household earnings and costs"},
	{"finance-compound", "Compound interest means the interest you earn is added to the principal, so your savings grow faster over time.",
		"why reinvested returns make a deposit snowball"},
	{"finance-diversify", "Diversification spreads investments across many assets so that a loss in one does not ruin the whole portfolio.",
		"reducing risk by holding a mix of shares and bonds"},
	{"finance-emergency-fund", "Set aside three to six months of living costs in an easily accessible savings account for unexpected events.",
		"a cash cushion for surprise bills like a car repair or job loss"},
	{"finance-credit", "Paying bills on time and keeping card balances low will raise your credit rating.",
		"improving the score lenders use to judge borrowers"},
	{"finance-inflation", "Inflation erodes purchasing power: the same amount of money buys fewer goods each year as prices rise.",
		"why a dollar gets less at the shop than it used to"},
	{"finance-invoice", "Send an invoice with a due date, itemised charges and your bank details so clients can pay promptly.",
		"billing customers correctly to get the cash quickly"},
	{"finance-depreciation", "Depreciation spreads the cost of equipment over its useful life in the accounts.",
		"writing down the value of machinery gradually on the books"},

	// Programming.
	{"prog-commits", "Commit small, focused changes with clear messages so that the history of the repository is easy to follow.",
		"good habits for saving code snapshots in git"},
	{"prog-unit-tests", "Unit tests check one function in isolation and run in milliseconds, catching regressions before release.",
		"automated verification of a single routine"},
	{"prog-recursion", "A recursive function calls itself on a smaller input until it reaches a base case.",
		"a routine that invokes its own code repeatedly until a stopping condition"},
	{"prog-sql-injection", "Use parameterised queries instead of concatenating user input into SQL strings to prevent injection attacks.",
		"stopping hackers from tampering with database statements through form fields"},
	{"prog-code-review", "In a code review, a colleague reads your changes and suggests improvements before they are merged.",
		"peer feedback on a pull request"},
	{"prog-binary-search", "Binary search halves the sorted range at every step, so it finds an item in logarithmic time.",
		"fast lookup in an ordered list by repeatedly splitting it in two"},
	{"prog-debugging", "Reproduce the bug reliably, then narrow down the cause by adding log statements or stepping through with a debugger.",
		"tracking down why software crashes"},
	{"prog-rest", "A REST API exposes resources at URLs and uses HTTP verbs such as GET, POST and DELETE to act on them.",
		"web service endpoints for creating, reading and removing records"},
	{"prog-naming", "Give variables descriptive names so that the code explains itself without comments.",
		"choosing meaningful identifiers in a program"},

	// Cooking.
	{"cooking-knife", "Curl your fingertips under when chopping vegetables so the blade cannot cut them.",
		"keeping the hand safe while slicing carrots and onions"},
	{"cooking-fridge", "Store raw meat on the bottom shelf of the fridge so its juices cannot drip onto ready-to-eat food.",
		"preventing cross contamination in the refrigerator with uncooked chicken"},
	{"cooking-bread", "Knead the dough for ten minutes until it becomes smooth and elastic, then leave it to rise in a warm place.",
		"working flour and yeast by hand before proving a loaf"},
	{"cooking-rice", "Rinse rice until the water runs clear to remove surface starch, which keeps the grains from sticking together.",
		"washing basmati so it turns out fluffy and not clumpy"},
	{"cooking-pasta", "Salt the boiling water generously before adding pasta, and save a cup of the cooking liquid for the sauce.",
		"tips for making spaghetti taste better"},
	{"cooking-onions", "Cook sliced onions slowly over low heat for forty minutes until they turn deep brown and sweet.",
		"gently caramelising shallots to bring out sugars"},
	{"cooking-hygiene", "Wash your hands with soap for twenty seconds before handling food and after touching raw eggs.",
		"kitchen cleanliness routine for chefs"},

	// Health.
	{"health-sleep", "Adults need seven to nine hours of sleep a night; a regular bedtime and a dark, cool room improve rest.",
		"how much shut-eye grown-ups require and how to get better slumber"},
	{"health-hydration", "Drink water regularly through the day, more in hot weather or when exercising, to avoid dehydration.",
		"how many fluids to consume during a workout in summer"},
	{"health-posture", "Set your monitor at eye level and keep your feet flat on the floor to reduce neck and back strain at a desk.",
		"ergonomic office setup to prevent aches"},
	{"health-stress", "Slow breathing, short walks and talking to a friend are simple ways to lower stress.",
		"coping techniques for anxiety and pressure"},
	{"health-vaccines", "Vaccines train the immune system to recognise a germ, so the body can fight it off quickly later.",
		"how immunisation protects people against infections"},
	{"health-nutrition", "A balanced plate is half vegetables and fruit, a quarter whole grains and a quarter lean protein.",
		"portion guide for a healthy meal"},
	{"health-burns", "Cool a burn under running water for twenty minutes and cover it loosely with cling film.",
		"treating a scald from a hot kettle"},
	{"health-cpr", "For CPR, push hard and fast in the centre of the chest, about two compressions per second.",
		"resuscitating someone whose heart has stopped"},

	// Management.
	{"mgmt-delegation", "Delegating means giving a team member responsibility for a task along with the authority to complete it.",
		"handing off work to staff and trusting them to finish it"},
	{"mgmt-feedback", "Give feedback soon after the event, describe the specific behaviour and its impact, and agree on next steps.",
		"how to tell an employee what they did well or badly"},
	{"mgmt-one-to-one", "Hold regular one-to-one meetings with each direct report to discuss progress, obstacles and career goals.",
		"private check-ins between a boss and an employee"},
	{"mgmt-smart-goals", "Goals should be specific, measurable, achievable, relevant and time-bound.",
		"criteria for writing good objectives"},
	{"mgmt-change", "Explain why a change is needed, involve people early and celebrate quick wins to reduce resistance.",
		"getting staff on board with a reorganisation"},
	{"mgmt-meetings", "Send an agenda in advance, start on time and end every meeting with clear actions and owners.",
		"running productive gatherings with colleagues"},
	{"mgmt-conflict", "When two colleagues disagree, listen to both sides separately before bringing them together to find common ground.",
		"resolving a dispute between coworkers"},
	{"mgmt-hiring", "Use the same structured questions for every candidate so interviews can be compared fairly.",
		"consistent recruitment process for evaluating applicants"},
	{"mgmt-onboarding", "A new starter's first week should include a buddy, system access and a clear plan for the first month.",
		"welcoming recent hires into the company"},

	// Information security and privacy.
	{"sec-phishing", "Phishing emails pretend to come from a trusted sender and try to make you click a link or open an attachment.",
		"spotting fraudulent messages that trick people into revealing passwords"},
	{"sec-passwords", "Use a long passphrase and a password manager, and turn on two-factor authentication for important accounts.",
		"protecting logins with strong credentials"},
	{"sec-updates", "Install software updates promptly, because they patch security holes that attackers already know about.",
		"why delaying upgrades to apps is dangerous"},
	{"sec-clean-desk", "Lock your screen when you step away and keep confidential papers in a locked drawer.",
		"privacy habits for leaving a workstation unattended"},
	{"privacy-data", "Collect only the personal data you need, keep it no longer than necessary and tell people how it will be used.",
		"GDPR principles for handling customer information"},

	// Communication, sales and service.
	{"comm-listening", "Active listening means paraphrasing what the speaker said and asking open questions before offering your own view.",
		"paying attention in conversation and showing you understood"},
	{"comm-presentation", "Open a presentation with a story or a surprising fact, limit each slide to one idea and rehearse aloud.",
		"tips for giving a talk to an audience"},
	{"comm-email", "Put the main request in the subject line and the first sentence so busy readers know what you need.",
		"writing concise work correspondence that gets answered"},
	{"sales-objection", "When a customer says the price is too high, ask what they are comparing it with before offering a discount.",
		"handling a buyer who thinks something is too expensive"},
	{"sales-followup", "Follow up within two days of a demo with a short summary of the prospect's needs and a proposed next meeting.",
		"staying in touch with a potential client after showing them the product"},
	{"sales-upsell", "Suggest a premium plan only when it solves a problem the customer has mentioned.",
		"offering buyers a pricier tier that fits their stated pain points"},
	{"service-complaint", "Apologise, thank the customer for raising the issue, fix it, and confirm afterwards that they are satisfied.",
		"responding to an unhappy client"},

	// HR, environment, learning, projects.
	{"hr-harassment", "Report harassment to your manager or HR; every complaint is investigated confidentially and retaliation is forbidden.",
		"what to do if a coworker treats you inappropriately"},
	{"hr-leave", "Request annual leave through the portal at least two weeks ahead so your manager can plan cover.",
		"booking vacation days in advance"},
	{"env-recycling", "Rinse containers and sort paper, glass and plastic into separate bins to make recycling effective.",
		"dividing household waste correctly for reuse"},
	{"env-energy", "Switch off lights and monitors at the end of the day to cut the office's electricity bill and carbon footprint.",
		"saving power at work"},
	{"learning-spacing", "Reviewing material at increasing intervals, rather than cramming, helps long-term memory.",
		"study schedule that spreads revision out so facts stick"},
	{"learning-notes", "Summarise each lecture in your own words within a day to check what you really understood.",
		"rewriting class content to test comprehension"},
	{"project-risk", "A risk register lists what might go wrong, how likely it is, its impact and who owns the mitigation.",
		"documenting possible threats to a plan and who handles them"},
	{"project-scope", "Scope creep happens when extra features are added without adjusting the schedule or budget.",
		"uncontrolled growth of requirements in a project"},
}
