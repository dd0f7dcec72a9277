// badge.svg: a shields-style coverage badge, "<target> native | 76%".
#include <fmt/format.h>

#include "report/renderers.h"
#include "results/analysis.h"

namespace mps_audit {
namespace {

// Verdana 11px advance widths are what shields.io measures; an average per character is close enough here.
size_t text_width(std::string_view s) {
  return 7 * s.size() + 10;
}

}  // namespace

std::string render_badge(const Results& results) {
  const VerdictCounts c = count_verdicts(results.records);
  const size_t probed = c.total - c.of(Verdict::kSkip);
  const double share = probed == 0 ? 0.0 : 100.0 * static_cast<double>(c.of(Verdict::kPass)) / probed;
  const std::string label =
      (results.environment.target.empty() ? std::string("mps") : results.environment.target) + " native";
  const std::string value = fmt::format("{:.0f}%", share);
  const char* color = share >= 90 ? "#4c1" : share >= 75 ? "#97ca00" : share >= 50 ? "#dfb317" : "#e05d44";
  const size_t lw = text_width(label), vw = text_width(value), w = lw + vw;
  const std::string title =
      fmt::format("{}: {} of {} probed op x dtype pairs pass natively", label, c.of(Verdict::kPass), probed);
  return fmt::format(
      R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="20" role="img" aria-label="{t}">)svg"
      R"svg(<title>{t}</title>)svg"
      R"svg(<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>)svg"
      R"svg(<stop offset="1" stop-opacity=".1"/></linearGradient>)svg"
      R"svg(<clipPath id="r"><rect width="{w}" height="20" rx="3" fill="#fff"/></clipPath>)svg"
      R"svg(<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="#555"/>)svg"
      R"svg(<rect x="{lw}" width="{vw}" height="20" fill="{c}"/><rect width="{w}" height="20" fill="url(#s)"/></g>)svg"
      R"svg(<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">)svg"
      R"svg(<text x="{lx}" y="14">{l}</text><text x="{vx}" y="14">{v}</text></g></svg>)svg"
      "\n",
      fmt::arg("w", w), fmt::arg("lw", lw), fmt::arg("vw", vw), fmt::arg("c", color), fmt::arg("t", escape_html(title)),
      fmt::arg("lx", lw / 2), fmt::arg("vx", lw + vw / 2), fmt::arg("l", escape_html(label)),
      fmt::arg("v", escape_html(value)));
}

}  // namespace mps_audit
