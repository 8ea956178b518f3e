#!/usr/bin/env bash
# The projects the local model's adapter (code-v1) was fitted on, fetched from the registries
# this machine reaches (PyPI, npm, Debian), and the list `python -m bench.finetune.pairs` reads:
#   bench/finetune/get-sources.sh DIR   ->  DIR/sources.txt (LANG:NAME:FOLDER:PAIRS per line)
# None of them is a retrieval-benchmark project (django, sqlalchemy, eslint, three, go-git,
# x/tools, tokio, syn, java.time/java.net, javac): pairs.py refuses those names, and the JDK's
# java.time and java.net packages are deleted here. Never commit what this fetches.
set -euo pipefail
T=${1:?usage: get-sources.sh DIR}
mkdir -p "$T"; T=$(cd "$T" && pwd); cd "$T"
OUT="$T/sources.txt"; : > "$OUT"

# Python: the interpreter's standard library, and wheels (pure-Python source inside)
mkdir -p py; (cd py
  pip download -q --no-deps --only-binary :all: --python-version 3.11 sympy tornado twisted flask \
    werkzeug jinja2 requests pandas matplotlib networkx docutils sphinx setuptools botocore celery \
    scrapy astropy scikit-learn numpy pyparsing marshmallow paramiko black pylint astroid boto3 \
    kombu sqlparse pytz babel openpyxl
  for f in *.whl; do d="x_${f%%-*}"; mkdir -p "$d"; (cd "$d" && python3 -m zipfile -e "../$f" .); done)
echo "python:stdlib:$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'):700" >> "$OUT"
for d in py/x_*; do echo "python:${d#py/x_}:$T/$d:200" >> "$OUT"; done

# Debian: Rust crates, the Go standard library and Go modules, the JDK's sources
mkdir -p deb; (cd deb
  for p in golang-1.19-src golang-github-spf13-cobra-dev golang-github-prometheus-client-golang-dev \
      golang-github-gorilla-mux-dev golang-github-hashicorp-hcl-dev golang-github-klauspost-compress-dev \
      golang-golang-x-net-dev golang-golang-x-crypto-dev openjdk-17-source \
      librust-{regex,regex-syntax,serde,rand,futures-util,hyper,clap,itertools,chrono,bytes,nom}-dev \
      librust-{rayon,rayon-core,crossbeam-channel,indexmap,hashbrown,petgraph,image,url,h2,http}-dev \
      librust-{serde-json,smallvec,memchr,aho-corasick,encoding-rs,tracing,mio,time,toml}-dev \
      librust-{quick-xml,num-traits,parking-lot,textwrap,reqwest,rustls,tower,ignore,walkdir,csv}-dev; do
    apt-get download -q "$p" >/dev/null
  done
  for f in *.deb; do dpkg -x "$f" "x_${f%%_*}"; done)
for d in deb/x_librust*/usr/share/cargo/registry/*; do echo "rust:$(basename "$d"):$T/$d:150" >> "$OUT"; done
echo "go:gostd:$T/deb/x_golang-1.19-src/usr/share/go-1.19/src:1000" >> "$OUT"
for d in deb/x_golang-github*/usr/share/gocode/src/github.com/*/* \
         deb/x_golang-golang-x-*/usr/share/gocode/src/golang.org/x/*; do
  echo "go:$(basename "$d"):$T/$d:250" >> "$OUT"
done
mkdir -p jdk; (cd jdk
  unzip -q -o ../deb/x_openjdk-17-source/usr/lib/jvm/openjdk-17/lib/src.zip 'java.base/*' \
    'java.desktop/*' 'java.sql/*' 'java.xml/*' 'java.logging/*' 'java.management/*' 'java.naming/*' \
    'jdk.jshell/*' 'java.prefs/*' 'java.rmi/*' 'jdk.jfr/*' 'jdk.httpserver/*' 'jdk.zipfs/*' \
    'java.scripting/*' 'jdk.jlink/*'
  rm -rf java.base/java/time java.base/java/net)  # the benchmark's java project
for m in jdk/*; do
  n=$(basename "$m"); c=200; [ "$n" = java.base ] && c=900; [ "$n" = java.desktop ] && c=700
  echo "java:$n:$T/$m:$c" >> "$OUT"
done

# npm: plain-JavaScript packages with doc comments (their src/ or lib/ where they have one)
mkdir -p npm; (cd npm
  for s in lodash@4 webpack@5 mathjs@13 moment@2 express@4 async@3 bluebird@3 handlebars@4 less@4 \
      terser@5 acorn@8 d3-array@3 d3-scale@3 d3-shape@3 chart.js@4 pixi.js@7 vue@2 immutable@4 rxjs@7 \
      jquery@3 underscore@1 ramda@0.30 yargs@17 commander@12 mocha@10 jest-circus@29 @babel/traverse@7 \
      @babel/types@7 ws@8 mongoose@8 sequelize@6 socket.io@4 koa@2 node-fetch@2 uuid@9 ajv@8 postcss@8 \
      sass@1 luxon@3 date-fns@3 mobx@6 redux@5 pdfjs-dist@4 leaflet@1 openlayers@4 fabric@5 konva@9 \
      phaser@3 ol@9 stylelint@16 markdown-it@14 jsdom@24 svgo@3 jsdoc@4 uglify-js@3 grunt@1 \
      browserify@17 mysql@2 pg@8 request@2 superagent@9 nodemailer@6 winston@3 pino@9 knex@3 ejs@3 \
      pug@3 jshint@2 csslint@1 http-proxy@1 body-parser@1 connect@3 serve-static@1 send@0 qs@6 \
      tough-cookie@4 js-yaml@4 escodegen@2 estraverse@5 jquery-ui@1 backbone@1 knockout@3 codemirror@5 \
      node-red@4 bower@1 npm-registry-fetch@17 enzyme@3 react-dom@18 q@1 hexo@7 gulp@5 karma@6 \
      webpack-dev-server@5 selenium-webdriver@4 puppeteer-core@22 passport@0 sinon@17 chai@4 \
      nunjucks@3 cheerio@0.22 xmldom@0.6 highlight.js@11 showdown@2 marked@4 papaparse@5 numeral@2 \
      decimal.js@10 big.js@6 bignumber.js@9 mathjax@3 vis-network@9 cytoscape@3 sortablejs@1 \
      dropzone@5 quill@1 hammerjs@2 interactjs@1 zrender@5 paper@0.12 matter-js@0.19 p5@1 tone@14 \
      howler@2 babylonjs@6 playcanvas@1; do
    npm pack --silent "$s" >/dev/null
  done
  for f in *.tgz; do mkdir -p "x_${f%.tgz}"; tar xzf "$f" -C "x_${f%.tgz}"; done)
for d in npm/x_*; do
  p=$(find "$d" -mindepth 1 -maxdepth 1 -type d | head -1)  # package/ in most tarballs, not ejs's
  [ -d "$p/src" ] && p=$p/src || { [ -d "$p/lib" ] && p=$p/lib; }
  echo "javascript:${d#npm/x_}:$T/$p:150" >> "$OUT"
done
wc -l "$OUT"
