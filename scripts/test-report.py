#!/usr/bin/env python3
"""The closing lines of scripts/test, read from the test runner's xunit report.

  test-report.py REPORT_DIR

REPORT_DIR holds the xunit*.xml files `swift test --xunit-output` wrote. Prints
each failed test with its first message (CI shows the log's tail), the ten
slowest tests, how long the tests ran, and last the counts in the plain form CI
logs are read by, alone on a line: `N passed, N failed` (", N skipped" may follow).
With --count-file FILE it also writes that line to FILE, for .ci/run to repeat as its
own last line after the later checks. Exits 1 when no report was written.

The report, not the console: Swift Testing's own summary line shares the
console with the graphs' processes and has been seen missing from a log
redirected to a file (one run in five, the run itself green).
"""
import glob
import sys
import xml.etree.ElementTree as ET


def main():
    arguments = sys.argv[1:]
    count_file = None
    if len(arguments) == 3 and arguments[1] == "--count-file":
        count_file = arguments[2]
    elif len(arguments) != 1:
        sys.exit("usage: test-report.py REPORT_DIR [--count-file FILE]")
    reports = glob.glob(arguments[0] + "/xunit*.xml")
    if not reports:
        sys.exit("no test report was written")
    tests = failed = skipped = 0
    seconds = 0.0
    cases = []
    for path in reports:
        root = ET.parse(path).getroot()
        for suite in root.iter("testsuite"):
            tests += int(suite.get("tests", 0))
            failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            skipped += int(suite.get("skipped", 0))
            seconds += float(suite.get("time", 0))
        cases += root.iter("testcase")

    slowest = sorted(cases, key=lambda case: float(case.get("time", 0)), reverse=True)[:10]
    if slowest:
        print("The ten slowest tests:")
        for case in slowest:
            print(f"  {float(case.get('time', 0)):7.2f} s  {case.get('classname', '')}.{case.get('name', '')}")
    # CI shows the log's tail: name each failed test there, with its first message.
    for case in cases:
        problems = case.findall("failure") + case.findall("error")
        if problems:
            message = (problems[0].get("message") or problems[0].text or "").strip().splitlines()
            print(f"FAILED {case.get('classname', '')}.{case.get('name', '')}: {message[0] if message else ''}"[:400])
    print(f"The tests ran {seconds:.0f} s.")
    count = f"{tests - failed - skipped} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "")
    print(count)
    if count_file:
        with open(count_file, "w") as file:
            file.write(count + "\n")


if __name__ == "__main__":
    main()
