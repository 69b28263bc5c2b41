// jest-puppeteer configuration for Lectern's runs of the cmi5 LMS test suite
// (scripts/cmi5-lts.sh): Debian's Chromium instead of puppeteer's own download.
module.exports = {
    launch: {
        headless: true,
        executablePath: process.env.PUPPETEER_EXECUTABLE_PATH || "/usr/bin/chromium",
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]
    }
};
