package org.lpf.spark.examples

import java.awt.{BasicStroke, Color, Font, RenderingHints}
import java.awt.image.BufferedImage
import java.io.File
import javax.imageio.ImageIO

/**
 * A grouped bar chart on a log scale, drawn with Java2D and written as PNG (no plotting
 * library needed on the cluster): one panel per measure, one group per graph, one bar
 * per implementation.
 */
object Chart {
  case class Panel(title: String, unit: String, values: Map[(String, String), Double]) // (graph, impl) -> value

  // Twelve colours: a chart of up to twelve series repeats none (the scale benchmark has
  // three contenders at four scales).
  private val palette = Seq(new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0xff7f0e),
    new Color(0x9467bd), new Color(0x8c564b), new Color(0x17becf), new Color(0x7f7f7f), new Color(0xe377c2),
    new Color(0xbcbd22), new Color(0x393b79), new Color(0xaec7e8))

  /** `notes`: short lines under the title (e.g. the runs that have no bar because they failed). */
  def write(file: File, title: String, graphs: Seq[String], impls: Seq[String], panels: Seq[Panel],
            notes: Seq[String] = Nil): Unit = {
    val (pw, ph) = (620, 420)
    val w = pw * panels.length
    val h = ph + 70
    val img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB)
    val g = img.createGraphics()
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON)
    g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON)
    g.setColor(Color.WHITE)
    g.fillRect(0, 0, w, h)
    g.setColor(Color.BLACK)
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16))
    g.drawString(title, 20, 26)
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11))
    notes.take(2).zipWithIndex.foreach { case (n, i) => g.drawString(n, 20, 39 + 11 * i) }
    // Legend.
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13))
    var lx = 20
    impls.zipWithIndex.foreach { case (impl, i) =>
      g.setColor(palette(i % palette.length)); g.fillRect(lx, h - 28, 14, 14)
      g.setColor(Color.BLACK); g.drawString(impl, lx + 20, h - 16)
      lx += 30 + g.getFontMetrics.stringWidth(impl)
    }
    panels.zipWithIndex.foreach { case (panel, pi) =>
      val x0 = pi * pw + 70
      val (top, bottom) = (85, ph - 20)
      val right = (pi + 1) * pw - 20
      val vs = panel.values.values.filter(v => v > 0 && !v.isNaN && !v.isInfinite)
      if (vs.nonEmpty) {
        val lo = math.floor(math.log10(vs.min)).toInt
        val hi = math.ceil(math.log10(vs.max)).toInt max (lo + 1)
        def y(v: Double): Int = (bottom - (math.log10(v) - lo) / (hi - lo) * (bottom - top)).round.toInt
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14))
        g.setColor(Color.BLACK)
        g.drawString(panel.title, x0, top - 22)
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12))
        for (e <- lo to hi) {
          val yy = y(math.pow(10, e))
          g.setColor(new Color(0xdddddd)); g.drawLine(x0, yy, right, yy)
          g.setColor(Color.BLACK); g.drawString(s"1e$e", x0 - 45, yy + 4)
        }
        g.drawString(panel.unit, x0 - 60, top - 6)
        g.setStroke(new BasicStroke(1f))
        g.drawLine(x0, top, x0, bottom); g.drawLine(x0, bottom, right, bottom)
        val groupW = (right - x0).toDouble / graphs.length
        val barW = (groupW * 0.8 / impls.length).toInt max 4
        graphs.zipWithIndex.foreach { case (graph, gi) =>
          val gx = x0 + (gi * groupW + groupW * 0.1).toInt
          impls.zipWithIndex.foreach { case (impl, ii) =>
            panel.values.get((graph, impl)).filter(v => v > 0 && !v.isNaN && !v.isInfinite).foreach { v =>
              val bx = gx + ii * barW
              val by = y(v)
              g.setColor(palette(ii % palette.length)); g.fillRect(bx, by, barW - 3, bottom - by)
              g.setColor(Color.BLACK)
              val label = if (v >= 10) f"$v%.0f" else if (v >= 0.1) f"$v%.2f" else f"$v%.1e"
              g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10))
              g.drawString(label, bx, by - 3)
            }
          }
          g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13))
          g.drawString(graph, gx + (groupW * 0.4).toInt - g.getFontMetrics.stringWidth(graph) / 2, bottom + 16)
        }
      }
    }
    g.dispose()
    file.getParentFile.mkdirs()
    ImageIO.write(img, "png", file)
  }
}
