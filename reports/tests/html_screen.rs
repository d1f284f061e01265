//! The HTML report leads to the failure, checked in a real browser: a failing report of
//! the size a full `loom check` produces (224 rules, 6,000 results, one rule cited by
//! 658 cases) is opened in headless Chromium at 1280x800. In the first screen: the
//! verdict, and the first failure's case, rules and first difference; the page is no
//! wider than the window and a few screens tall, not hundreds. The screenshot itself is
//! decoded and checked where the DOM says the verdict and the failure are.
//!
//! Needs Debian's `chromium` (`apt-get install -y chromium`; .ci/run installs it). Without
//! it the test is reported as skipped (a failure under `LOOM_REQUIRE_TOOLS=1`); any other
//! problem fails it. `LOOM_KEEP_SCREENSHOT=1` keeps the screenshot and prints where it is.

use loom_report::{render_html, CaseResult, Environment, Failure, Report, RuleInfo};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 800;
/// The report's fail colour (`--fail` in the template).
const FAIL_RGB: [u8; 3] = [0xcf, 0x22, 0x2e];

/// A failing report shaped like a full run: every rule of a 224-rule catalogue, 6,000
/// results, SNAP-10 cited by 658 of them, and three failures with large values.
fn big_failing_report() -> Report {
    let groups = [
        "FOLD", "SNAP", "EMIT", "INGRESS", "SPI", "CONF", "ABI", "REPLAY",
    ];
    let mut rules = Vec::new();
    for i in 0..224 {
        let group = groups[i % groups.len()];
        let id = format!("{group}-{:02}", i / groups.len() + 1);
        rules.push(
            RuleInfo::new(&id, "MUST", group, format!("rule {id}: a sentence of rule text that is long enough to wrap in its cell of the rule matrix"))
                .with_section("§4"),
        );
    }
    let mut results = Vec::new();
    for i in 0..6_000 {
        let rule = if i < 658 {
            "SNAP-10".to_string()
        } else {
            rules[i % rules.len()].id.clone()
        };
        results.push(CaseResult::pass(
            "fold",
            "snapshot-equivalence",
            format!("log-0-{i}/writer-1.{}.0", 20 + i % 6),
            [rule],
        ));
    }
    let state = |seq: u64| {
        json!({
            "status": "running",
            "frames": (0..30).map(|n| (format!("step-{n}"), json!({"status": "completed", "attempt": 1, "output": {"n": n}}))).collect::<serde_json::Map<_, _>>(),
            "variables": {"_decisions": {"d": {"choice": "a", "seq": seq}}, "_input": {"order": 42}},
            "sequence": 61,
        })
    };
    for (i, case) in [
        "fold-fold38-seq-from-envelope",
        "fold-fold38-repeat-keeps-first-seq",
    ]
    .iter()
    .enumerate()
    {
        results.push(
            CaseResult::fail(
                "vectors",
                "fold",
                *case,
                ["FOLD-38", "SNAP-10"],
                "fold(events) differs from the expected state",
                Failure::values(state(3), state(4 + i as u64)).with_event_index(17),
            )
            .with_reproduce(format!(
                "loom vectors run --filter {case} --kernel-cmd 'node kernel.mjs'"
            )),
        );
    }
    results.push(CaseResult::error(
        "vectors",
        "runtime",
        "runtime-replay01-resume-reruns-served",
        ["REPLAY-01"],
        "the adapter exited during runScenario (exit status 3)",
    ));
    let mut env = Environment::new("loom", "0.1.0");
    env.implementation_hello = Some(json!({"name": "my-kernel", "version": "0.3.0"}));
    Report::new(env, rules, results)
}

/// Runs Chromium headless with the flags a CI box needs, a fresh profile and a time
/// limit; returns its stdout.
fn run_chromium(chromium: &str, dir: &Path, args: &[String]) -> String {
    let profile = dir.join(format!("profile-{}", args.len()));
    let out = Command::new("timeout")
        .args(["--kill-after=5", "90", chromium])
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--window-size={WIDTH},{HEIGHT}"),
        ])
        .args(args)
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Geometry measured in the browser, by a probe script added to a copy of the page.
fn measure(chromium: &str, dir: &Path, html: &str) -> Value {
    const PROBE: &str = r#"<script>
(function () {
  function box(el) { if (!el) return null; var r = el.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }
  var first = document.getElementById("failure-1");
  var out = {
    innerWidth: window.innerWidth, innerHeight: window.innerHeight,
    clientWidth: document.documentElement.clientWidth,
    scrollWidth: document.documentElement.scrollWidth,
    scrollHeight: document.documentElement.scrollHeight,
    verdict: box(document.getElementById("verdict")),
    verdictText: (document.getElementById("verdict") || {}).textContent,
    failure: box(first),
    failureHeading: box(first && first.querySelector("h3")),
    failureFacts: box(first && first.querySelector("dl")),
    failureText: first ? first.querySelector("h3").textContent + " | " + first.querySelector("dl").textContent : null
  };
  var pre = document.createElement("pre"); pre.id = "loom-probe";
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
})();
</script></body>"#;
    let probe = dir.join("probe.html");
    std::fs::write(&probe, html.replace("</body>", PROBE)).unwrap();
    let dom = run_chromium(
        chromium,
        dir,
        &[
            "--dump-dom".to_string(),
            format!("file://{}", probe.display()),
        ],
    );
    let start = dom.find("<pre id=\"loom-probe\">").expect("the probe ran") + 21;
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn screenshot(chromium: &str, dir: &Path, page: &Path) -> (u32, u32, Vec<u8>) {
    let png_path = dir.join("first-screen.png");
    run_chromium(
        chromium,
        dir,
        &[
            format!("--screenshot={}", png_path.display()),
            format!("file://{}", page.display()),
        ],
    );
    let decoder = png::Decoder::new(std::fs::File::open(&png_path).expect("a screenshot"));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgb: Vec<u8> = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, rgb)
}

/// How many pixels of `rect` (CSS px, clipped to the screen) are the fail colour.
fn fail_pixels(shot: &(u32, u32, Vec<u8>), rect: &Value) -> usize {
    let (w, h, rgb) = shot;
    let f = |k: &str| rect[k].as_f64().unwrap().max(0.0) as u32;
    let (x0, x1) = (f("left"), f("right").min(*w));
    let (y0, y1) = (f("top"), f("bottom").min(*h));
    let mut n = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            let i = ((y * w + x) * 3) as usize;
            let px = &rgb[i..i + 3];
            if px.iter().zip(FAIL_RGB).all(|(a, b)| a.abs_diff(b) <= 12) {
                n += 1;
            }
        }
    }
    n
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loom-html-screen-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn conf_01_a_failing_report_shows_the_verdict_and_the_first_failure_in_the_first_screen(
    chromium: &str,
) {
    let dir = scratch();
    let report = big_failing_report();
    let html = render_html(&report).unwrap();
    let page = dir.join("report.html");
    std::fs::write(&page, &html).unwrap();

    let m = measure(chromium, &dir, &html);
    let num = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    assert_eq!(num(&m["innerWidth"]), f64::from(WIDTH), "{m}");
    assert_eq!(m["verdictText"], "FAIL");
    assert!(
        num(&m["verdict"]["bottom"]) <= f64::from(HEIGHT),
        "verdict below the first screen: {m}"
    );
    for part in ["failureHeading", "failureFacts"] {
        assert!(
            num(&m[part]["bottom"]) <= f64::from(HEIGHT),
            "the first failure's {part} is below the first screen: {m}"
        );
    }
    let first = report.failures().next().unwrap();
    assert_eq!(first.case_id, "fold-fold38-repeat-keeps-first-seq");
    let text = m["failureText"].as_str().unwrap();
    assert!(
        text.contains("vectors/fold/fold-fold38-repeat-keeps-first-seq")
            && text.contains("FOLD-38")
            && text.contains("17")
            && text.contains("/variables/_decisions/d/seq"),
        "the first failure names its case, rules, event index and path: {text}"
    );
    assert!(
        num(&m["scrollWidth"]) <= num(&m["clientWidth"]),
        "the page is wider than a {WIDTH} px window: {m}"
    );
    assert!(
        num(&m["scrollHeight"]) <= f64::from(HEIGHT) * 40.0,
        "the page is {} px tall",
        m["scrollHeight"]
    );

    // The screenshot shows it: the verdict badge and the failure's left border are
    // painted in the fail colour where the DOM says they are.
    let shot = screenshot(chromium, &dir, &page);
    assert_eq!((shot.0, shot.1), (WIDTH, HEIGHT));
    let verdict_area = (num(&m["verdict"]["right"]) - num(&m["verdict"]["left"]))
        * (num(&m["verdict"]["bottom"]) - num(&m["verdict"]["top"]));
    let red = fail_pixels(&shot, &m["verdict"]) as f64;
    assert!(
        red > verdict_area * 0.4,
        "{red} of {verdict_area} verdict pixels are red"
    );
    let mut border = m["failure"].clone();
    border["right"] = json!(num(&m["failure"]["left"]) + 4.0);
    border["bottom"] = json!(num(&m["failureFacts"]["bottom"]));
    assert!(
        fail_pixels(&shot, &border) > 40,
        "no failure border in the first screen"
    );
    if std::env::var_os("LOOM_KEEP_SCREENSHOT").is_some() {
        println!("screenshot: {}", dir.join("first-screen.png").display());
    } else {
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

fn main() -> std::process::ExitCode {
    use loom_test_support::{needs, run, Tool};
    run(vec![needs(
        Tool::Chromium,
        "conf_01_a_failing_report_shows_the_verdict_and_the_first_failure_in_the_first_screen",
        conf_01_a_failing_report_shows_the_verdict_and_the_first_failure_in_the_first_screen,
    )])
}
