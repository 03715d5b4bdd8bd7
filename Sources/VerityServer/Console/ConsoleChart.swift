import Foundation
import Hummingbird
import VerityCore

/// Charts drawn on the server as SVG: no script, readable by a screen reader through their title and table.
enum ConsoleChart {
    /// Started and approved verifications per day, as paired bars.
    static func bars(_ report: VerificationActivityReport) -> String {
        let days = (0..<report.days).map(report.total(day:))
        let highest = max(days.map(\.started).max() ?? 0, 1)
        let width = 40 * report.days + 60
        let height = 180
        let plot = 140.0
        var bars = ""
        for (index, counts) in days.enumerated() {
            let x = 50 + index * 40
            let started = plot * Double(counts.started) / Double(highest)
            let approved = plot * Double(counts.approved) / Double(highest)
            let day = Date(timeIntervalSince1970: Double(report.firstDay + index) * 86_400)
            let label = day.formatted(.iso8601.month().day().dateSeparator(.dash))
            bars += """
                <rect x="\(x)" y="\(150 - started)" width="16" height="\(started)" fill="#93c5fd"><title>\(label): \
                \(counts.started) started</title></rect>
                <rect x="\(x + 17)" y="\(150 - approved)" width="16" height="\(approved)" fill="#1d4ed8"><title>\
                \(label): \(counts.approved) approved</title></rect>
                <text x="\(x + 16)" y="166" text-anchor="middle">\(label)</text>
                """
        }
        return """
            <svg role="img" aria-labelledby="chart-title" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" \
            xmlns="http://www.w3.org/2000/svg">
            <title id="chart-title">Verifications started (light) and approved (dark) per day; the highest day had \
            \(highest)</title>
            <line x1="45" y1="150" x2="\(width - 5)" y2="150" stroke="#888"/>
            <text x="40" y="14" text-anchor="end">\(highest)</text><text x="40" y="150" text-anchor="end">0</text>
            \(bars)
            </svg>
            """
    }
}
