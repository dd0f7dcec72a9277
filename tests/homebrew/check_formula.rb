#!/usr/bin/env ruby
# frozen_string_literal: true

# Checks a Homebrew formula of mps-audit without Homebrew, which this Linux machine does not have (and which runs
# formulae only against its own prefix): the file must parse, and, loaded against a stub of the part of Homebrew's
# formula DSL that formulae use, it must declare what building mps-audit needs (cmake/Dependencies.cmake's packages,
# as Homebrew formulae), pass CMake only variables that CMakeLists.txt knows, configure, build and install into the
# keg, and have a test block. With --keg PREFIX (a `cmake --install` of this build, laid out as the formula installs
# it), the test block runs for real against PREFIX/bin/mps-audit, from an empty folder, as `brew test` runs it.
#
#   ruby tests/homebrew/check_formula.rb [--name NAME] [--keg PREFIX] FORMULA.rb...
#
# Every problem is one line, `FORMULA: problem`. Exit 0: every formula passes; 1: one does not; 2: bad usage.

require "optparse"
require "pathname"
require "shellwords"
require "tmpdir"

ROOT = Pathname(__dir__).parent.parent.expand_path # the repository

# Paths the stub gives the formula while its install step is recorded: nothing is built or written there.
STUB_PREFIX = Pathname("/homebrew-stub/Cellar/formula/HEAD")
STUB_OPT = Pathname("/homebrew-stub/opt")
STUB_WHEEL = "/wheel-stub/site-packages/torch/share/cmake"

# cmake/Dependencies.cmake's find_package names, and the Homebrew formula that provides each. A package that is only
# found when a build option is on is needed only when the formula leaves that option on. A package missing here fails
# the check, so that a new dependency of the build cannot go unnoticed by the formula.
HOMEBREW_FORMULA_OF_PACKAGE = {
  "Torch" => { formula: "pytorch", runtime: true },
  "yaml-cpp" => { formula: "yaml-cpp", runtime: true },
  "fmt" => { formula: "fmt", runtime: true },
  "nlohmann_json" => { formula: "nlohmann-json", runtime: false },
  "CLI11" => { formula: "cli11", runtime: false },
  "GTest" => { formula: "googletest", runtime: false, option: "MPS_AUDIT_BUILD_TESTS" },
  "benchmark" => { formula: "google-benchmark", runtime: false, option: "MPS_AUDIT_BUILD_BENCHMARKS" },
}.freeze

class FormulaAbort < StandardError; end
class TestFailure < StandardError; end

# The stub of Homebrew's Formula: class-level DSL calls are recorded; the instance methods that install and test
# steps call either record the command (install) or run it (test, with --keg).
class Formula
  DSL = %i[
    desc homepage url mirror sha256 version head license revision version_scheme livecheck bottle keg_only
    depends_on uses_from_macos on_macos on_linux on_arm on_intel on_system resource patch conflicts_with fails_with
    option deprecated_option deprecate! disable! service link_overwrite skip_clean cxxstdlib_check pour_bottle?
    no_autobump! compatibility_version
  ].freeze

  class << self
    attr_reader :calls, :test_block

    def inherited(subclass)
      super
      subclass.instance_variable_set(:@calls, [])
    end

    # Formula["pytorch"]: a dependency, of which formulae use the opt_* paths.
    def [](name)
      Dependency.new(name)
    end

    DSL.each do |method|
      define_method(method) do |*args, **kwargs, &block|
        @calls << [method, args, kwargs]
        # Platform blocks hold more DSL calls: recorded as if on every platform.
        class_exec(&block) if block && %i[on_macos on_linux on_arm on_intel on_system].include?(method)
      end
    end

    def test(&block)
      @test_block = block
    end

    def method_missing(name, *args, **kwargs, &block)
      raise NoMethodError, "`#{name}` is not Homebrew formula DSL this check knows: check the name, or teach " \
                           "tests/homebrew/check_formula.rb (class Formula) about it"
    end

    def respond_to_missing?(*)
      false
    end

    def dsl(method)
      @calls.select { |call| call[0] == method }
    end
  end

  # Formula["pytorch"] in the stub: its opt_prefix and the folders in it.
  Dependency = Struct.new(:name) do
    def opt_prefix
      STUB_OPT/name
    end

    %w[bin lib include share].each { |folder| define_method("opt_#{folder}") { opt_prefix/folder } }
  end

  attr_reader :name, :prefix, :commands

  # mode :record (the install step: commands are recorded) or :run (the test block, against the keg).
  def setup_stub(name:, mode:, prefix:, testpath: nil)
    @name = name
    @mode = mode
    @prefix = Pathname(prefix)
    @testpath = testpath && Pathname(testpath)
    @commands = []
    self
  end

  %w[bin lib include libexec share].each { |folder| define_method(folder) { prefix/folder } }

  def opt_prefix
    prefix
  end

  def pkgshare
    share/name
  end

  def doc
    share/"doc"/name
  end

  def buildpath
    ROOT
  end

  def testpath
    @testpath || raise(NoMethodError, "testpath is only for the test block")
  end

  def version
    "HEAD"
  end

  # Homebrew's, less what only matters to a real build.
  def std_cmake_args
    %W[-DCMAKE_INSTALL_PREFIX=#{prefix} -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_BUILD_TYPE=Release
       -DCMAKE_FIND_FRAMEWORK=LAST -DCMAKE_VERBOSE_MAKEFILE=ON -Wno-dev -DBUILD_TESTING=OFF]
  end

  def system(cmd, *args)
    argv = [cmd, *args].flatten.map(&:to_s)
    @commands << argv
    return true if @mode == :record

    puts "==> #{argv.shelljoin}"
    return true if Kernel.system(*argv)

    raise TestFailure, "`#{argv.shelljoin}` failed (#{$?.exitstatus ? "exit #{$?.exitstatus}" : $?})"
  end

  def shell_output(cmd, result = 0)
    @commands << Shellwords.split(cmd.to_s)
    return "" if @mode == :record

    puts "==> #{cmd}"
    out = IO.popen(["/bin/sh", "-c", cmd.to_s], &:read)
    raise TestFailure, "`#{cmd}` exited #{$?.exitstatus}, not #{result}" if $?.exitstatus != result

    out
  end

  def odie(message)
    raise FormulaAbort, message
  end

  def opoo(message)
    warn "Warning: #{message}"
  end

  def ohai(message)
    puts "==> #{message}"
  end

  # The assertions of Homebrew's test blocks (Minitest's), for --keg runs.
  def assert(value, message = nil)
    value || raise(TestFailure, message || "assertion failed")
  end

  def refute(value, message = nil)
    assert(!value, message)
  end

  def assert_equal(expected, actual)
    assert(expected == actual, "expected #{expected.inspect}, got #{actual.inspect}")
  end

  def assert_match(pattern, string)
    pattern = Regexp.new(Regexp.escape(pattern)) if pattern.is_a?(String)
    assert(pattern.match?(string), "#{pattern.inspect} does not match #{string.to_s[0, 200].inspect}")
  end

  def refute_match(pattern, string)
    pattern = Regexp.new(Regexp.escape(pattern)) if pattern.is_a?(String)
    refute(pattern.match?(string), "#{pattern.inspect} matches #{string.to_s[0, 200].inspect}")
  end

  def assert_path_exists(path)
    assert(File.exist?(path), "#{path} does not exist")
  end

  def refute_path_exists(path)
    refute(File.exist?(path), "#{path} exists")
  end

  def assert_predicate(object, predicate)
    assert(object.public_send(predicate), "#{object} is not #{predicate}")
  end
end

# Homebrew's class name for a formula file's name (Formulary.class_s): mps-audit -> MpsAudit.
def class_name_of(name)
  name.capitalize.gsub(/[-_.\s]([a-zA-Z0-9])/) { Regexp.last_match(1).upcase }.tr("+", "x").sub(/(.)@(\d)/, '\1AT\2')
end

# What CMakeLists.txt and cmake/*.cmake define and find: option() names, every word they use, find_package names.
def cmake_sources
  @cmake_sources ||= [ROOT/"CMakeLists.txt", *ROOT.glob("cmake/*.cmake")].to_h { |p| [p, p.read] }
end

def cmake_options
  cmake_sources.values.join("\n").scan(/^\s*option\(\s*(\w+)/).flatten
end

def cmake_knows?(variable)
  return true if variable.start_with?("CMAKE_")

  cmake_sources.values.any? { |text| text.match?(/(?<![\w-])#{Regexp.escape(variable)}(?![\w-])/) }
end

def found_packages
  (ROOT/"cmake/Dependencies.cmake").read.scan(/^\s*find_package\(\s*([\w-]+)/).flatten.uniq
end

def configure_index(commands)
  commands.index { |c| c[0] == "cmake" && ((c.include?("-S") && c.include?("-B")) || c.include?("..")) }
end

def defines(command)
  command.grep(/\A-D/).to_h do |arg|
    key, value = arg.delete_prefix("-D").split("=", 2)
    [key.split(":").first, value]
  end
end

# Records the install step with HOMEBREW_TORCH_PREFIX as given (nil: unset).
def record_install(klass, name, torch_prefix)
  saved = ENV.fetch("HOMEBREW_TORCH_PREFIX", nil)
  set_env("HOMEBREW_TORCH_PREFIX", torch_prefix)
  formula = klass.allocate.setup_stub(name: name, mode: :record, prefix: STUB_PREFIX)
  formula.install
  formula.commands
ensure
  set_env("HOMEBREW_TORCH_PREFIX", saved)
end

def set_env(variable, value)
  if value
    ENV[variable] = value
  else
    ENV.delete(variable)
  end
end

def check_metadata(klass, name, problems)
  desc = klass.dsl(:desc).dig(0, 1, 0).to_s
  if desc.empty?
    problems << "no desc"
  else
    problems << "desc is #{desc.length} characters, more than Homebrew's 80" if desc.length > 80
    problems << "desc starts with an article" if desc.match?(/\A(the|an?)\s/i)
    problems << "desc starts with the formula's name" if desc.downcase.start_with?(name)
    problems << "desc ends with a full stop" if desc.end_with?(".")
  end
  problems << "no homepage" if klass.dsl(:homepage).empty?

  heads = klass.dsl(:head)
  problems << "neither url nor head: nothing to build from" if heads.empty? && klass.dsl(:url).empty?
  heads.each do |_, args, kwargs|
    problems << "head has no URL" if args.first.to_s.empty?
    # Homebrew checks out branch master unless told otherwise.
    problems << "head names no branch: Homebrew would build master" if kwargs[:branch].to_s.empty?
  end

  licenses = klass.dsl(:license)
  license_files = ROOT.glob("{LICENSE,LICENCE,COPYING}*")
  if license_files.empty? && !licenses.empty?
    problems << "declares license #{licenses.dig(0, 1, 0).inspect}, but the repository states none (no LICENSE file)"
  elsif !license_files.empty? && licenses.empty?
    problems << "no license, but the repository has #{license_files.first.basename}"
  end
end

def check_dependencies(klass, install_commands, problems)
  # depends_on "x" => :build comes as keywords (Ruby 3 takes string keys there), depends_on "x" as an argument.
  deps = klass.dsl(:depends_on).to_h do |_, args, kwargs|
    name, tags = args.empty? ? kwargs.first : [args.first, nil]
    name, tags = name.first if name.is_a?(Hash)
    [name.to_s, Array(tags)]
  end
  configure = configure_index(install_commands)&.then { |i| install_commands[i] } || []
  flags = defines(configure)

  problems << 'no depends_on "cmake" => :build' unless deps["cmake"]&.include?(:build)
  if configure.each_cons(2).include?(%w[-G Ninja]) && !deps.key?("ninja")
    problems << 'configures with -G Ninja, but no depends_on "ninja" => :build'
  end
  found_packages.each do |package|
    entry = HOMEBREW_FORMULA_OF_PACKAGE[package]
    unless entry
      problems << "cmake/Dependencies.cmake finds package #{package}, which tests/homebrew/check_formula.rb does " \
                  "not map to a Homebrew formula: add it there and to the formula"
      next
    end
    next if entry[:option] && flags[entry[:option]]&.match?(/\A(OFF|NO|FALSE|0)\z/i)

    tags = deps[entry[:formula]]
    if tags.nil?
      why = entry[:option] ? " (or -D#{entry[:option]}=OFF)" : ""
      problems << "no depends_on \"#{entry[:formula]}\"#{why}: CMake finds #{package} (cmake/Dependencies.cmake)"
    elsif entry[:runtime] && tags.include?(:build)
      problems << "depends_on \"#{entry[:formula]}\" is :build only, but mps-audit links it at run time"
    end
  end
end

def check_install(klass, name, problems)
  commands = record_install(klass, name, nil)
  configure = configure_index(commands)
  unless configure
    problems << "install runs no CMake configure step (system \"cmake\", \"-S\", \".\", \"-B\", \"build\", ...)"
    return commands
  end
  flags = defines(commands[configure])
  std_args = Formula.allocate.setup_stub(name: name, mode: :record, prefix: STUB_PREFIX).std_cmake_args
  missing = std_args - commands[configure]
  problems << "the configure step does not pass std_cmake_args (#{missing.first}...)" unless missing.empty?
  # The formula's own variables; Homebrew's std_cmake_args set some that every CMake project may ignore.
  defines(commands[configure] - std_args).each_key do |variable|
    if variable.start_with?("MPS_AUDIT_") && !cmake_options.include?(variable)
      problems << "-D#{variable}: CMakeLists.txt has no such option (it has #{cmake_options.join(", ")})"
    elsif !cmake_knows?(variable) && !variable.match?(/\A\w+_DIR\z/)
      problems << "-D#{variable}: neither CMakeLists.txt nor cmake/*.cmake use that variable"
    end
  end
  # ccache, which CMakeLists.txt uses when it finds it, would write outside Homebrew's build sandbox.
  if cmake_knows?("CCACHE_PROGRAM") && flags["CCACHE_PROGRAM"] != "OFF"
    problems << "the configure step does not pass -DCCACHE_PROGRAM=OFF"
  end
  torch_dirs = flags.values_at("CMAKE_PREFIX_PATH", "Torch_DIR").compact.join(";")
  pytorch = Formula["pytorch"].opt_prefix.to_s
  problems << "the configure step does not point CMake at Formula[\"pytorch\"] (#{pytorch})" \
    unless torch_dirs.include?(pytorch)
  wheel = record_install(klass, name, STUB_WHEEL)
  wheel_configure = configure_index(wheel)&.then { |i| wheel[i] } || []
  unless defines(wheel_configure).values_at("CMAKE_PREFIX_PATH", "Torch_DIR").compact.join(";").include?(STUB_WHEEL)
    problems << "with HOMEBREW_TORCH_PREFIX set, the configure step does not pass it to CMake"
  end

  build = commands.index { |c| c[0] == "cmake" && c.include?("--build") }
  install = commands.index do |c|
    c[0] == "cmake" && (c.include?("--install") || c.each_cons(2).include?(%w[--target install]))
  end
  if build.nil?
    problems << "install runs no build step (system \"cmake\", \"--build\", \"build\")"
  elsif build < configure
    problems << "install builds before it configures"
  end
  if install.nil?
    problems << "install runs no install step (system \"cmake\", \"--install\", \"build\")"
  elsif build && install < build
    problems << "install installs before it builds"
  end
  commands
end

# The test block: present; with a keg, run from an empty folder as `brew test` runs it (the variables that point
# mps-audit at other data are not passed by brew, so not here either).
def check_test(klass, name, keg, problems)
  block = klass.test_block
  return problems << "no test block (test do ... end)" unless block
  return unless keg

  Dir.mktmpdir("brew-test") do |testpath|
    saved = ENV.select { |k, _| k.start_with?("MPS_AUDIT_") }
    saved.each_key { |k| ENV.delete(k) }
    formula = klass.allocate.setup_stub(name: name, mode: :run, prefix: keg, testpath: testpath)
    begin
      Dir.chdir(testpath) { formula.instance_exec(&block) }
    rescue TestFailure, FormulaAbort => e
      problems << "test block failed against #{keg}: #{e.message}"
    ensure
      saved.each { |k, v| ENV[k] = v }
    end
    runs = formula.commands.select { |c| File.basename(c[0].to_s) == name && c[1] == "run" }
    problems << "the test block runs no `#{name} run`" if runs.empty?
  end
end

def check(path, name, keg)
  problems = []
  source = path.read
  begin
    RubyVM::InstructionSequence.compile(source, path.to_s)
  rescue SyntaxError => e
    return ["syntax error: #{e.message.lines.first(3).map(&:strip).join(" ")}"]
  end

  namespace = Module.new
  saved_repo = ENV.delete("HOMEBREW_MPS_AUDIT_REPO")
  begin
    namespace.module_eval(source, path.to_s) # as Homebrew's Formulary loads a formula
  rescue StandardError => e
    return ["does not load: #{e.message.lines.first.strip}"]
  ensure
    ENV["HOMEBREW_MPS_AUDIT_REPO"] = saved_repo if saved_repo
  end
  klass = namespace.constants.map { |c| namespace.const_get(c) }.find { |c| c.is_a?(Class) && c < Formula }
  return ["defines no subclass of Formula"] unless klass

  expected = class_name_of(name)
  unless klass.name.end_with?("::#{expected}")
    problems << "class #{klass.name.split("::").last}: Homebrew expects class #{expected} in #{name}.rb"
  end
  check_metadata(klass, name, problems)
  begin
    commands = check_install(klass, name, problems)
    check_dependencies(klass, commands, problems)
  rescue StandardError => e
    problems << "install step fails under the stub: #{e.message.lines.first.strip}"
  end
  check_test(klass, name, keg, problems)
  problems
end

name = nil
keg = nil
parser = OptionParser.new do |o|
  o.banner = "usage: #{$PROGRAM_NAME} [--name NAME] [--keg PREFIX] FORMULA.rb..."
  o.on("--name NAME", "the formula's name (default: each file's name)") { |v| name = v }
  o.on("--keg PREFIX", "an installed mps-audit to run the test block against") { |v| keg = Pathname(v).expand_path }
end
begin
  files = parser.parse(ARGV)
rescue OptionParser::ParseError => e
  warn "#{e.message}\n#{parser.banner}"
  exit 2
end
if files.empty? || (keg && !(keg/"bin").directory?)
  warn(keg ? "#{keg}/bin: no such folder" : parser.banner)
  exit 2
end

failed = false
files.each do |file|
  path = Pathname(file).expand_path
  shown = path.to_s.delete_prefix("#{ROOT}/")
  problems = path.file? ? check(path, name || path.basename(".rb").to_s, keg) : ["no such file"]
  if problems.empty?
    puts "#{shown}: ok#{keg ? ", its test passes against #{keg}" : ""}"
  else
    failed = true
    problems.each { |p| puts "#{shown}: #{p}" }
  end
end
exit(failed ? 1 : 0)
